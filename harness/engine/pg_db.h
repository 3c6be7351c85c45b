// PgDb: the Db a task sees on PostgreSQL, and PgRun, what the tasks of one
// run share (the database, the statements in flight).
//
// Every statement is a scheduling point. When the task is picked, its
// statement is sent (PQsendQueryParams) and PgDb waits for the answer. A
// statement that does not answer at once is either slow or blocked on a lock
// another task holds: PgDb asks the server, as PostgreSQL's isolation tester
// does (pg_isolation_test_session_is_blocked on the monitor session). Blocked,
// the task parks (Scheduler::block_on_db) and the scheduler runs another;
// slow, it keeps waiting. When a statement finishes, PgRun settles the
// statements still in flight (each either finished or blocked again) before
// anything else runs, so what a task sees never depends on how fast the
// server woke a waiter, and wakes exactly the tasks whose statement finished.
// When every task is parked the server must break a deadlock: the task the
// scheduler resumes waits for whichever statement the server answers first.
//
// One release may wake several waiters at once (two copies' UPDATEs queued
// behind a third's row lock), and then the server, not the seed, decides who
// goes first. So a statement is left waiting on the server only when no
// other waiting statement waits for the same transaction, directly or down
// a chain of waits (a cycle is kept: that is a deadlock the server breaks).
// Otherwise it is cancelled (back to a savepoint taken before it, inside a
// transaction) and its task parks "queued", to send it again once some
// transaction ended. Which of several queued statements goes first is then
// the scheduler's choice, drawn from the seed.
//
// A transaction the task leaves open is rolled back when the PgDb goes (a
// crashed process's connection closing). Threads: the run's thread only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/pg_database.h"
#include "engine/server_run.h"
#include "env/task_db.h"
#include "sim/scheduler.h"

namespace twice::engine {

class PgDb;

// The settling, queueing and deadlock rules live in ServerRun (server_run.h);
// PgRun asks PostgreSQL who blocks a statement.
class PgRun final : public ServerRun {
 public:
  PgRun(sim::Scheduler& scheduler, PgDatabase& database) : ServerRun(scheduler), database_(database) {}
  // env::TaskDbSource: a PgDb for the task holding the baton.
  std::unique_ptr<env::TaskDb> open() override;

  PgDatabase& database() { return database_; }
  // pg_isolation_test_session_is_blocked, then pg_blocking_pids.
  std::vector<const ServerSession*> blockers(const ServerSession& s) override;

 private:
  PgDatabase& database_;
};

class PgDb final : public env::TaskDb, public ServerSession {
 public:
  // Takes a session from the run's database for the task's lifetime. On a
  // failure to connect, every statement answers that error.
  explicit PgDb(PgRun& run);
  ~PgDb() override;
  PgDb(const PgDb&) = delete;
  PgDb& operator=(const PgDb&) = delete;

  // The statement loop is ServerSession::execute(); PgDb supplies its steps.
  Result exec(std::string_view sql, std::initializer_list<Value> params) override;
  Result exec(std::string_view sql, const std::vector<Value>& params) override;
  Engine engine() const override { return Engine::kPostgres; }
  bool in_transaction() const override;
  bool committed_writes() const override { return committed_writes_; }
  env::CommitWatch* commit_watch() const override { return commit_watch_; }

  // --- ServerSession, for PgRun ---
  bool in_flight() const override { return in_flight_ && !answered_; }
  bool answer_arrived(int timeout_us) override;
  int socket() const override;
  int backend_pid() const { return session_ ? session_->backend_pid : 0; }

 private:
  // --- the steps of ServerSession::execute() ---
  Status prepare_statement(std::string_view sql, const std::vector<Value>& params) override;
  Status send() override;
  bool can_take_savepoint() const override;
  bool outside_transaction() const override;
  bool is_transaction_control(std::string_view sql) const override;
  Status run_now(const std::string& sql) override;
  bool cancel() override;
  bool answer_kept() const override { return answered_; }
  void abandon() override;
  Result take_answer(std::string_view sql) override;
  // Reads what has arrived; true once ReadyForQuery did (results go to results_).
  bool whole_answer_read();
  void clear_results();

  PgRun& run_;
  PgSession* session_ = nullptr;
  bool in_flight_ = false;  // sent, answer not yet taken
  bool answered_ = false;   // the whole answer arrived
  std::vector<PGresult*> results_;  // read before ReadyForQuery, for take_answer()
  std::map<std::string, std::string, std::less<>> translated_;  // ? -> $n, per statement text
  const std::string* statement_ = nullptr;  // the prepared statement's text, in translated_
  std::vector<std::string> storage_;         // its parameters as text ...
  std::vector<const char*> values_;          // ... and libpq's pointers into them
};

}  // namespace twice::engine
