#include "env/held_file.h"

#include <map>
#include <mutex>

namespace twice::env {
namespace {

struct Table {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<HeldBytes>, std::less<>> files;
};
Table& table() {
  static Table* instance = new Table;  // never destroyed: a connection may close during exit
  return *instance;
}

}  // namespace

void hold_in_memory(const std::string& path, std::string bytes) {
  auto file = std::make_shared<HeldBytes>();
  file->bytes = std::move(bytes);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.files[path] = std::move(file);
}

std::shared_ptr<HeldBytes> held_in_memory(const std::string& path) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.files.find(path);
  return it == t.files.end() ? nullptr : it->second;
}

void stop_holding(const std::string& path) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  t.files.erase(path);
}

}  // namespace twice::env
