#include "env/run_database.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

#include "env/seeded_database.h"

namespace twice::env {
namespace {

// SQLite's database header: the file change counter, and the copy of it that
// says the in-header page count is valid (https://sqlite.org/fileformat.html).
constexpr std::size_t kChangeCounter = 24;
constexpr std::size_t kVersionValidFor = 92;
constexpr std::size_t kHeaderSize = 100;

std::uint32_t get_u32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

void put_u32(char* p, std::uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return ::ftruncate(fd, static_cast<off_t>(bytes.size())) == 0;
}

// getpid(), asked of the kernel once per process: of_this_thread() and
// reset() ask on every run (104,000 system calls in the main job). A fork
// clears it in the child (pthread_atfork), so a forked child still sees the
// file and connections as its parent's.
pid_t this_process() {
  static std::atomic<pid_t> cached{0};
  [[maybe_unused]] static const bool cleared_at_fork =
      ::pthread_atfork(nullptr, nullptr, [] { cached.store(0, std::memory_order_relaxed); }) == 0;
  pid_t pid = cached.load(std::memory_order_relaxed);
  if (pid == 0) {
    pid = ::getpid();
    cached.store(pid, std::memory_order_relaxed);
  }
  return pid;
}

}  // namespace

RunDatabase& RunDatabase::of_this_thread() {
  thread_local RunDatabase instance;
  if (instance.owner_ != 0 && instance.owner_ != this_process()) {
    // Forked: the file and the connections are the parent's. Closing them
    // here would be safe for the parent's locks, removing the file would not;
    // forget them (a few kilobytes) and start over.
    (void)instance.pool_.release();
    (void)instance.checker_.release();
    instance.fd_ = -1;
    instance.held_.reset();
    instance.path_.clear();
    instance.key_.clear();
    instance.owner_ = 0;
  }
  return instance;
}

RunDatabase::~RunDatabase() { discard(); }

void RunDatabase::discard() {
  pool_.reset();
  checker_.reset();
  if (fd_ >= 0) ::close(fd_);  // after the connections: closing a file drops the process's locks on it
  fd_ = -1;
  if (!path_.empty()) remove_database(path_);
  path_.clear();
  key_.clear();
  image_.reset();
  held_.reset();
  owner_ = 0;
}

void RunDatabase::remove_before_exit() {
  (void)pool_.release();
  (void)checker_.release();
  if (!path_.empty()) remove_database(path_);
  path_.clear();
}

void RunDatabase::create(const std::string& key, std::shared_ptr<const std::string> image) {
  discard();
  owner_ = this_process();
  path_ = fresh_database_path();
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const std::string path = path_;
    path_.clear();
    throw std::runtime_error("cannot create the run's database " + path);
  }
  if (!write_all(fd_, *image)) {
    const std::string path = path_;
    discard();
    throw std::runtime_error("cannot write the run's database " + path);
  }
  // Held from here on: its connections read and write memory, not the kernel.
  held_ = hold_in_memory(path_, *image);
  key_ = key;
  image_ = std::move(image);
  counter_ = image_->size() >= kHeaderSize
                 ? get_u32(reinterpret_cast<const unsigned char*>(image_->data()) + kChangeCounter)
                 : 0;
  pool_ = std::make_unique<ConnectionPool>(path_);
  checker_ = std::make_unique<CachedConnection>(path_);
}

bool RunDatabase::rewrite_in_place() {
  if (image_->size() < kHeaderSize) return false;  // not a database SQLite wrote: nothing to stamp
  if (!pool_->idle() || !checker_->reusable()) return false;
  // The counter the last run left: every value the file had lies between the
  // image's and this one, and counter_ is the highest of all runs.
  // The file is held in memory (env/held_file.h): read and written there.
  const std::string& bytes = held_->bytes();
  if (bytes.size() < kChangeCounter + 4) return false;
  counter_ = std::max(counter_, get_u32(reinterpret_cast<const unsigned char*>(bytes.data()) + kChangeCounter));
  if (counter_ == UINT32_MAX) return false;  // a fresh file restarts the count
  ++counter_;
  // As the pwrite and ftruncate of the whole image did, copying only the
  // chunks the last run wrote (and the header, stamped last time).
  held_->restore(*image_);
  char stamp[4];
  put_u32(stamp, counter_);
  held_->write(kChangeCounter, stamp, sizeof stamp);
  held_->write(kVersionValidFor, stamp, sizeof stamp);
  pool_->prepare_next_run();
  return true;
}

void RunDatabase::reset(const std::string& key, const std::function<void(sqlite3*)>& seed) {
  if (owner_ == this_process() && key == key_ && rewrite_in_place()) return;
  create(key, seeded_image(key, seed));
}

}  // namespace twice::env
