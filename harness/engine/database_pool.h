// DatabasePool: the databases a cluster made on its server, for runs to
// lease one at a time, twice_<pid>_<n>. What PgCluster and MariadbCluster
// share; each says how to create a database on its server and how to open one.
//
// Two databases per lessee, taken in turns: a run is handed the database
// given back longest ago, whose reset (sent ahead when its last run ended,
// PgDatabase::reset_ahead) the server has had a whole run's time to do. The
// exact reset is a TRUNCATE, which costs PostgreSQL about 4 ms of its own
// time; taken in turns, it overlaps the other database's run instead of
// delaying the next run. Either database is reset exactly to the seeded
// state, so which one a run gets changes nothing it can see.
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
  // The idle database given back longest ago, once every lessee has a
  // spare; else a new one: `create(name)` makes it on the server (a Status),
  // `open(name, out)` connects to it (a Status).
  template <class Create, class Open>
  Status lease(std::unique_ptr<Database>& out, Create create, Open open) {
    out.reset();
    std::lock_guard lock(mutex_);
    // Every database made is idle or out (one whose open failed counts as out:
    // at worst one spare more).
    const std::size_t leased = created_.size() - idle_.size();
    const bool spare_missing = created_.size() < 2 * (leased + 1);
    if (idle_.size() >= 2 || (!idle_.empty() && !spare_missing)) {
      out = std::move(idle_.front());
      idle_.erase(idle_.begin());
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
  std::vector<std::unique_ptr<Database>> idle_;  // oldest first
  std::vector<std::string> created_;
};

}  // namespace twice::engine
