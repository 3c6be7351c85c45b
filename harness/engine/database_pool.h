// DatabasePool: the databases a cluster made on its server, for runs to
// lease one at a time: an idle one when there is one, else a new one named
// twice_<pid>_<n>. What PgCluster and MariadbCluster share; each says how to
// create a database on its server and how to open one.
// Thread-safe: lease() and give_back() may be called from any thread.
#pragma once

#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "twice/status.h"

namespace twice::engine {

template <class Database>
class DatabasePool {
 public:
  // An idle database, else a new one: `create(name)` makes it on the server
  // (a Status), `open(name, out)` connects to it (a Status).
  template <class Create, class Open>
  Status lease(std::unique_ptr<Database>& out, Create create, Open open) {
    out.reset();
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      out = std::move(idle_.back());
      idle_.pop_back();
      return Status::OK();
    }
    const std::string name = fmt::format("twice_{}_{}", ::getpid(), next_number());
    if (Status s = create(name); !s.ok())
      return Status::error(fmt::format("cannot create database {}: {}", name, s.message()));
    created_.push_back(name);
    return open(name, out);
  }

  void give_back(std::unique_ptr<Database> db) {
    std::lock_guard lock(mutex_);
    idle_.push_back(std::move(db));
  }

  // Closes the idle databases' connections; the names of every database
  // made, for a cluster on someone else's server to drop.
  std::vector<std::string> close_all() {
    std::lock_guard lock(mutex_);
    idle_.clear();
    return created_;
  }

 private:
  // Numbered across every pool of the process: two clusters on one server
  // (one of them an --engine-url naming it) must not make the same name.
  static int next_number() {
    static std::atomic<int> next{0};
    return next++;
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<Database>> idle_;
  std::vector<std::string> created_;
};

}  // namespace twice::engine
