#include "env/held_file.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

namespace twice::env {
namespace {

struct HeldFiles {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<HeldBytes>, std::less<>> files;
};
HeldFiles& held_files() {
  static HeldFiles* instance = new HeldFiles;  // never destroyed: a connection may close during exit
  return *instance;
}

}  // namespace

void HeldBytes::mark(std::size_t from, std::size_t to) {
  if (from >= to) return;
  const std::size_t first = from / kChunk, last = (to - 1) / kChunk;
  if (dirty_.size() <= last) dirty_.resize(last + 1, 0);
  for (std::size_t c = first; c <= last; ++c) dirty_[c] = 1;
  first_dirty_ = std::min(first_dirty_, first);
  last_dirty_ = std::max(last_dirty_, last);
}

void HeldBytes::write(std::size_t offset, const void* data, std::size_t n) {
  const std::size_t end = offset + n;
  if (bytes_.size() < end) resize(end);  // a gap reads as zeros, as in a file
  std::memcpy(bytes_.data() + offset, data, n);
  mark(offset, end);
}

void HeldBytes::resize(std::size_t size) {
  // Both ways the bytes between the sizes change: cut, they read as zeros
  // if the file grows again; added, they are zeros the image may not have.
  mark(std::min(size, bytes_.size()), std::max(size, bytes_.size()));
  bytes_.resize(size);
}

void HeldBytes::assign(std::string_view image) {
  bytes_.assign(image);
  std::fill(dirty_.begin(), dirty_.end(), 0);
  first_dirty_ = SIZE_MAX;
  last_dirty_ = 0;
}

void HeldBytes::restore(std::string_view image) {
  // Chunks past the image's end go with the resize; a chunk the file lost to
  // a truncate comes back as zeros and is marked, so the copy below fills it.
  bytes_.resize(image.size());
  for (std::size_t c = first_dirty_; c <= last_dirty_ && c < dirty_.size(); ++c) {
    if (!dirty_[c]) continue;
    dirty_[c] = 0;
    const std::size_t at = c * kChunk;
    if (at < image.size()) std::memcpy(bytes_.data() + at, image.data() + at, std::min(kChunk, image.size() - at));
  }
  first_dirty_ = SIZE_MAX;
  last_dirty_ = 0;
}

std::shared_ptr<HeldBytes> hold_in_memory(const std::string& path, std::string bytes) {
  auto file = std::make_shared<HeldBytes>(std::move(bytes));
  HeldFiles& t = held_files();
  std::lock_guard lock(t.mutex);
  t.files[path] = file;
  return file;
}

std::shared_ptr<HeldBytes> held_in_memory(const std::string& path) {
  HeldFiles& t = held_files();
  std::lock_guard lock(t.mutex);
  auto it = t.files.find(path);
  return it == t.files.end() ? nullptr : it->second;
}

void stop_holding(const std::string& path) {
  HeldFiles& t = held_files();
  std::lock_guard lock(t.mutex);
  t.files.erase(path);
}

}  // namespace twice::env
