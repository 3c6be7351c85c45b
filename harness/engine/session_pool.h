// SessionPool: the task sessions of one server database (PgDatabase's,
// MariadbDatabase's), which the runs of that database reuse one after
// another. A run takes sessions with acquire() and gives them back with
// release(); a session is opened only when none is idle.
//
// acquire() hands out the idle session with the lowest index: a run's tasks
// get the same sessions in the same order from run to run, so anything keyed
// to a session (PostgreSQL's deadlock_timeout, which picks the deadlock
// victim) is the same too, and a seed replays.
// Threads: one at a time (the database's run).
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "twice/status.h"

namespace twice::engine {

template <class Session>
class SessionPool {
 public:
  // An idle session, lowest index first; else a new one, opened by
  // `connect(index, out)` (a Status; on success `out` holds the session,
  // whose `index` is then set here). On failure `out` is null.
  template <class Connect>
  Status acquire(Session*& out, Connect connect) {
    out = nullptr;
    if (!idle_.empty()) {
      auto best = std::min_element(idle_.begin(), idle_.end(), [](auto* a, auto* b) { return a->index < b->index; });
      out = *best;
      idle_.erase(best);
      return Status::OK();
    }
    const int index = static_cast<int>(sessions_.size());
    std::unique_ptr<Session> session;
    if (Status s = connect(index, session); !s.ok()) return s;
    session->index = index;
    out = session.get();
    sessions_.push_back(std::move(session));
    return Status::OK();
  }
  void release(Session* session) { idle_.push_back(session); }
  // Closes every session (all must be idle); the next ones open afresh, from index 0.
  void close_all() {
    idle_.clear();
    sessions_.clear();
  }
  // Every session opened, idle or not (to change a setting on each).
  const std::vector<std::unique_ptr<Session>>& all() const { return sessions_; }

 private:
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<Session*> idle_;
};

}  // namespace twice::engine
