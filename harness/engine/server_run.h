// ServerRun and ServerSession: what PostgreSQL's and MariaDB's Db on the
// scheduler share, whatever the engine: one statement loop, and the
// statements of one run in flight on a server, settled after each step,
// parked when blocked, queued when one
// release could wake several waiters at once (so that the server never picks
// the winner: the scheduler does, from the seed), and the way out when every
// task is parked (queued statements go again unqueued; else the server must
// break a deadlock). pg_db.h tells the whole contract; an engine supplies
// how to ask its server who blocks a statement (blockers) and, when its
// answer cannot name the holders, a stricter must_queue.
// Threads: the run's thread only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "env/task_db.h"
#include "sim/scheduler.h"

namespace twice::engine {

class ServerRun;

// One task's connection, as the run sees it, and the statement loop of both
// engines (execute(), a template method): send, wait a millisecond, ask the
// server whether the statement is blocked, park or queue it, break a
// deadlock when everyone waits, then settle the others. pg_db.h tells the
// contract. An engine supplies the steps the loop calls: how to send a
// statement, read its answer, cancel it, and what its transaction state is.
class ServerSession {
 public:
  // The session of the task holding the baton, in `run`.
  explicit ServerSession(ServerRun& run);
  virtual ~ServerSession() = default;

  // A statement was sent and its answer not yet taken.
  virtual bool in_flight() const = 0;
  // Reads what arrived; true once the whole answer is there. Waits up to
  // `timeout_us` microseconds for it (0: does not wait).
  virtual bool answer_arrived(int timeout_us) = 0;
  // The socket to poll while waiting for an answer.
  virtual int socket() const = 0;
  // A transaction is open on the connection.
  virtual bool in_transaction() const = 0;

  // In flight and, when last asked, waiting for these tasks' locks (a null
  // entry: a holder the engine could not name).
  bool waiting() const { return in_flight() && !waits_for_.empty(); }
  const std::vector<const ServerSession*>& waits_for() const { return waits_for_; }
  void set_waits_for(std::vector<const ServerSession*> w) { waits_for_ = std::move(w); }
  bool queued() const { return queued_; }
  void forbid_queueing() { no_queue_ = true; }
  int task() const { return task_; }

 protected:
  // The Db::exec of both engines: a scheduling point, then the statement
  // (prepared by prepare_statement()) through the loop, then finished:
  // traced, its writes counted, the others settled.
  Result execute(std::string_view sql, const std::vector<Value>& params);
  // At close, when a transaction is open: traced (with its writes), and
  // rolled back, as a crashed process's connection closing.
  void roll_back_at_close();
  // The session goes: its locks are gone, so the others settle and queued
  // statements may go again.
  void leave_run();

  // --- The steps each engine supplies ---
  // Readies `sql` with `params` for send() (placeholders, parameter text).
  virtual Status prepare_statement(std::string_view sql, const std::vector<Value>& params) = 0;
  // Sends the prepared statement without waiting for its answer.
  virtual Status send() = 0;
  // A transaction is open and may take a savepoint (not one an error aborted).
  virtual bool can_take_savepoint() const = 0;
  // No transaction is open: the statement is autocommitted.
  virtual bool outside_transaction() const = 0;
  // BEGIN, COMMIT, SAVEPOINT, SET ...: never wrapped in a savepoint.
  virtual bool is_transaction_control(std::string_view sql) const = 0;
  // A statement run to completion at once (savepoints, the rollback at close).
  virtual Status run_now(const std::string& sql) = 0;
  // Cancels the statement in flight; true when it was cancelled, false when
  // its answer came first (then answer_kept() and take_answer() returns it).
  virtual bool cancel() = 0;
  virtual bool answer_kept() const = 0;
  // Cancels and discards whatever the statement in flight answers.
  virtual void abandon() = 0;
  // The answer of the statement `sql`, waiting for it if need be; the
  // session is idle afterwards.
  virtual Result take_answer(std::string_view sql) = 0;
  // True when a newly blocked statement must first let the other statements
  // in flight settle, when some already wait (MariaDB: a victim rolling
  // back still holds its locks for a moment).
  virtual bool settles_before_parking() const { return false; }
  // Who is told of this session's commits (env::TaskDb::watch_commits); nullptr: nobody.
  virtual env::CommitWatch* commit_watch() const = 0;

  ServerRun& server_run_;
  sim::Scheduler& scheduler_;
  int task_;
  Status broken_;          // the connection could not be had: every statement answers this
  bool queued_ = false;    // parked with its statement cancelled, to send again
  bool no_queue_ = false;  // every task was parked: this one's next send may not be queued
  std::vector<const ServerSession*> waits_for_;
  std::vector<std::string> uncommitted_;  // the open transaction's writes, as traced
  bool committed_writes_ = false;

 private:
  Result finish(std::string_view sql, const std::string& text, bool savepoint, Result r);
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
  // True when a session of this run other than `s` has a transaction open or
  // a statement in flight: only then can `s`'s statement wait for a lock (the
  // run's database has no other users while it runs).
  bool others_may_hold_locks(const ServerSession& s) const;
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
