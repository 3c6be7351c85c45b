#include "env/seeded_database.h"

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "env/sqlite_db.h"

namespace twice::env {
namespace {

// A test process may seed many generated scenarios: past this many images
// all are dropped, rather than tracking which are still in use.
constexpr std::size_t kMaxImages = 64;

struct SeededImages {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> by_key;
};

SeededImages& images() {
  static SeededImages instance;
  return instance;
}

std::string read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot read the seeded database " + path);
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      ::close(fd);
      throw std::runtime_error("cannot read the seeded database " + path);
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return bytes;
}

void write_file(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create the run's database " + path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      ::close(fd);
      remove_database(path);
      throw std::runtime_error("cannot write the run's database " + path);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// Seeds a scratch database and returns its bytes.
std::string seed_image(const std::function<void(sqlite3*)>& seed) {
  const std::string scratch = fresh_database_path();
  sqlite3* conn = open_database(scratch);
  try {
    seed(conn);
  } catch (...) {
    sqlite3_close(conn);
    remove_database(scratch);
    throw;
  }
  // Every write is in the file once its transaction committed (the journal
  // is in memory): closing adds nothing.
  sqlite3_close(conn);
  std::string bytes = read_file(scratch);
  remove_database(scratch);
  return bytes;
}

}  // namespace

std::shared_ptr<const std::string> seeded_image(const std::string& key, const std::function<void(sqlite3*)>& seed) {
  SeededImages& all = images();
  std::shared_ptr<const std::string> image;
  {
    std::lock_guard lock(all.mutex);
    if (auto it = all.by_key.find(key); it != all.by_key.end()) image = it->second;
  }
  if (!image) {
    // Seeded outside the lock: two threads may both seed a new key, and get
    // the same bytes.
    image = std::make_shared<const std::string>(seed_image(seed));
    std::lock_guard lock(all.mutex);
    if (all.by_key.size() >= kMaxImages) all.by_key.clear();
    all.by_key.emplace(key, image);
  }
  return image;
}

void create_seeded_database(const std::string& path, const std::string& key,
                            const std::function<void(sqlite3*)>& seed) {
  write_file(path, *seeded_image(key, seed));
}

}  // namespace twice::env
