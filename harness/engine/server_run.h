// ServerRun and ServerSession: what PostgreSQL's and MariaDB's Db on the
// scheduler share, whatever the engine: the statements of one run in flight
// on a server, settled after each step, parked when blocked, queued when one
// release could wake several waiters at once (so that the server never picks
// the winner: the scheduler does, from the seed), and the way out when every
// task is parked (queued statements go again unqueued; else the server must
// break a deadlock). pg_db.h tells the whole contract; an engine supplies
// how to ask its server who blocks a statement (blockers) and, when its
// answer cannot name the holders, a stricter must_queue.
// Threads: the run's thread only.
#pragma once

#include <memory>
#include <vector>

#include "env/task_db.h"
#include "sim/scheduler.h"

namespace twice::engine {

// One task's connection, as the run sees it.
class ServerSession {
 public:
  explicit ServerSession(int task) : task_(task) {}
  virtual ~ServerSession() = default;

  // A statement was sent and its answer not yet taken.
  virtual bool in_flight() const = 0;
  // Reads what arrived; true once the whole answer is there. Waits up to
  // `timeout_ms` for it (0: does not wait).
  virtual bool answer_arrived(int timeout_ms) = 0;
  // The socket to poll while waiting for an answer.
  virtual int socket() const = 0;

  // In flight and, when last asked, waiting for these tasks' locks (a null
  // entry: a holder the engine could not name).
  bool waiting() const { return in_flight() && !waits_for_.empty(); }
  const std::vector<const ServerSession*>& waits_for() const { return waits_for_; }
  void set_waits_for(std::vector<const ServerSession*> w) { waits_for_ = std::move(w); }
  bool queued() const { return queued_; }
  void forbid_queueing() { no_queue_ = true; }
  int task() const { return task_; }

 protected:
  int task_;
  bool queued_ = false;    // parked with its statement cancelled, to send again
  bool no_queue_ = false;  // every task was parked: this one's next send may not be queued
  std::vector<const ServerSession*> waits_for_;
};

class ServerRun : public env::TaskDbSource {
 public:
  explicit ServerRun(sim::Scheduler& scheduler) : scheduler_(scheduler) {}
  ServerRun(const ServerRun&) = delete;
  ServerRun& operator=(const ServerRun&) = delete;

  sim::Scheduler& scheduler() { return scheduler_; }

  void opened(ServerSession* s) { open_.push_back(s); }
  void closed(ServerSession* s);
  // The tasks of this run whose locks `s`'s statement waits for; empty when
  // it does not wait for any (it is merely slow).
  virtual std::vector<const ServerSession*> blockers(const ServerSession& s) = 0;
  // True when a waiting `s` must be cancelled and queued: another waiting
  // statement waits for one of the same transactions, directly or down a
  // chain of waits (a cycle back to `s` is kept: a deadlock the server breaks).
  virtual bool must_queue(const ServerSession& s, const std::vector<const ServerSession*>& blockers) const;
  // True when some statement of this run waits on the server.
  bool any_waiting() const;
  // A transaction ended or a statement failed: queued statements may go again.
  void wake_queued();
  bool any_queued() const;
  // Every task is parked and some are queued: they all go again, and this
  // time none is queued, so that the server sees (and breaks) any deadlock.
  void wake_queued_for_deadlock();
  // A statement finished or a transaction ended: every other statement in
  // flight is waited for until it finished (its task is woken) or is blocked.
  void settle(const ServerSession* except);
  // Every task is parked: waits until the server answers any statement in
  // flight (a deadlock victim's error, or a waiter's grant), then settles.
  // False when nothing moved for a long time.
  bool wait_for_any();

 protected:
  const std::vector<ServerSession*>& open_sessions() const { return open_; }

 private:
  sim::Scheduler& scheduler_;
  std::vector<ServerSession*> open_;  // every session of the run, in the order they opened
};

}  // namespace twice::engine
