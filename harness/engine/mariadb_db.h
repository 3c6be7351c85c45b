// MariadbDb: the Db a task sees on MariaDB (InnoDB), and MariadbRun, what
// the tasks of one run share. The same contract as PgDb (pg_db.h): every
// statement a scheduling point, sent with Connector/C's non-blocking calls
// (mysql_real_query_start/_cont, MYSQL_OPT_NONBLOCK); one that does not
// answer within a millisecond is either slow or waits for a row lock, and
// InnoDB is asked which (SHOW ENGINE INNODB STATUS: a trx block of this
// session's thread id that says LOCK WAIT). Blocked, the task parks; the
// settling and queueing rules are ServerRun's.
//
// Two things differ from PostgreSQL. InnoDB detects a deadlock the moment a
// wait would close a cycle (its victim: the transaction that changed fewer
// rows, a function of the schedule, not of timing), so a waiting statement
// is never part of a cycle. Almost the moment: the statement's thread
// enqueues its lock first and looks for the cycle after, so a statement seen
// waiting in between is taken for slow until the server's count of waits
// that passed the check covers every wait it shows (blockers()). And InnoDB
// does not say reliably whose lock a statement waits for
// (information_schema.INNODB_LOCK_WAITS is a cache refreshed at most every
// 100 ms), so MariadbRun never names the holder: a
// blocked statement is queued whenever another statement of the run already
// waits on the server. At most one statement of a run then waits on the
// server at a time (unless every task is parked), so a release wakes at most
// one waiter and the server never picks a winner. A queued statement is
// cancelled with KILL QUERY ID (back to a savepoint taken before it, inside a
// transaction) and sent again once a transaction ended.
//
// Result::changes is rows matched (CLIENT_FOUND_ROWS). A transaction the task
// leaves open is rolled back when the MariadbDb goes. Threads: the run's
// thread only.
#pragma once

#include <mysql.h>

#include <string>
#include <vector>

#include "engine/mariadb_database.h"
#include "engine/server_run.h"
#include "env/task_db.h"
#include "sim/scheduler.h"

namespace twice::engine {

// How many transactions SHOW ENGINE INNODB STATUS lists as waiting for a
// lock (its LIST OF TRANSACTIONS, not the last deadlock's report).
std::size_t count_lock_waits(const std::string& status);

class MariadbRun final : public ServerRun {
 public:
  MariadbRun(sim::Scheduler& scheduler, MariadbDatabase& database) : ServerRun(scheduler), database_(database) {}
  // env::TaskDbSource: a MariadbDb for the task holding the baton.
  std::unique_ptr<env::TaskDb> open() override;

  MariadbDatabase& database() { return database_; }
  // {nullptr} when InnoDB says the session's transaction waits for a lock.
  std::vector<const ServerSession*> blockers(const ServerSession& s) override;
  // Queued whenever another statement of the run waits on the server.
  bool must_queue(const ServerSession& s, const std::vector<const ServerSession*>& blockers) const override;

 private:
  // A statement of the run other than `s` waits on the server.
  bool another_waits(const ServerSession& s) const;

  MariadbDatabase& database_;
};

class MariadbDb final : public env::TaskDb, public ServerSession {
 public:
  // Takes a session from the run's database for the task's lifetime. On a
  // failure to connect, every statement answers that error.
  explicit MariadbDb(MariadbRun& run);
  ~MariadbDb() override;
  MariadbDb(const MariadbDb&) = delete;
  MariadbDb& operator=(const MariadbDb&) = delete;

  // The statement loop is ServerSession::execute(); MariadbDb supplies its steps.
  Result exec(std::string_view sql, std::initializer_list<Value> params) override;
  Result exec(std::string_view sql, const std::vector<Value>& params) override;
  Engine engine() const override { return Engine::kMariadb; }
  bool in_transaction() const override;
  bool committed_writes() const override { return committed_writes_; }
  env::CommitWatch* commit_watch() const override { return commit_watch_; }

  // --- ServerSession, for MariadbRun ---
  bool in_flight() const override { return phase_ != Phase::kIdle && phase_ != Phase::kAnswered; }
  bool answer_arrived(int timeout_us) override;
  int socket() const override;
  unsigned long thread_id() const { return session_ ? session_->thread_id : 0; }
  // The server's id of the statement in flight, when InnoDB's status showed it.
  void set_query_id(unsigned long id) { query_id_ = id; }
  // The statement in flight was seen waiting before InnoDB had looked for a
  // deadlock; true while it may still be taken for slow (MariadbRun::blockers).
  bool may_wait_for_deadlock_check() { return ++unchecked_waits_ <= kMostUncheckedWaits; }

 private:
  enum class Phase { kIdle, kQuery, kStore, kAnswered };
  // --- the steps of ServerSession::execute() ---
  Status prepare_statement(std::string_view sql, const std::vector<Value>& params) override;
  // Sends the prepared statement; the answer is read by answer_arrived().
  Status send() override;
  bool can_take_savepoint() const override { return in_transaction(); }
  bool outside_transaction() const override { return !in_transaction(); }
  bool is_transaction_control(std::string_view sql) const override;
  Status run_now(const std::string& sql) override;
  bool cancel() override;
  bool answer_kept() const override { return has_kept_; }
  void abandon() override;
  Result take_answer(std::string_view sql) override;
  bool settles_before_parking() const override { return true; }
  // Takes the answer that arrived (waits for it if need be).
  Result take();

  MariadbRun& run_;
  MariadbSession* session_ = nullptr;
  std::string query_text_;  // the prepared statement, its parameters inlined
  Phase phase_ = Phase::kIdle;
  int wait_ = 0;           // MYSQL_WAIT_* the call in progress waits for
  int query_error_ = 0;    // mysql_real_query's outcome
  MYSQL_RES* result_ = nullptr;
  unsigned long query_id_ = 0;
  // Times the statement in flight was seen waiting before InnoDB's deadlock
  // check. A table lock's wait is never counted by the server, so after this
  // many it is taken as a wait (the asks come after a patience that doubles
  // from 0.1-1 ms up to 32 ms: 25 to 130 ms in all).
  static constexpr int kMostUncheckedWaits = 8;
  int unchecked_waits_ = 0;
  bool has_kept_ = false;
  Result kept_;  // an answer read while cancelling, for take_answer()
  // InnoDB rolled the whole transaction back (a deadlock victim, or 1020
  // under innodb_snapshot_isolation): the client's status flags, read from
  // the last OK packet, still say "in a transaction" until the next
  // statement answers.
  bool rolled_back_ = false;
};

}  // namespace twice::engine
