// PgDatabase: one PostgreSQL database that runs use one after another (a
// worker's), with the connections its runs reuse: a pool of task sessions,
// a monitor session (asks whether a session is blocked) and a checker session
// (seeds, resets, and runs the oracle queries).
//
// Per-run state: prepare() brings the database to the seeded state of a
// (schema, scenario) key. The first time for a key it drops every table and
// runs the schema's setup SQL; after that it resets in place: TRUNCATE of
// every table (RESTART IDENTITY), every sequence back to 1, then the seed rows
// again, in one transaction. TRUNCATE, not DELETE: it leaves the tables
// exactly as the install did (empty new files, the planner's statistics
// unset), so a run never depends on the runs before it (see
// docs/architecture.md, "A database per worker, reset in place").
// One thread at a time; a database belongs to one run while leased.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/isolation.h"
#include "engine/pg_connection.h"
#include "engine/session_pool.h"

namespace twice::engine {

// One task connection, closed with it. `index` orders the sessions for
// deadlock_timeout.
struct PgSession {
  PgSession() = default;
  ~PgSession() { PQfinish(conn); }
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;
  PGconn* conn = nullptr;
  int backend_pid = 0;
  int index = 0;
};

// kTruncate is what runs use. kDelete is kept for the benchmark only: it is
// cheaper, but the dead rows and index entries it leaves change the physical
// layout (and so SERIALIZABLE's page-level predicate locks) from run to run.
enum class ResetMethod { kDelete, kTruncate };

class PgDatabase {
 public:
  static Status open(const std::string& conninfo, std::unique_ptr<PgDatabase>& out);
  PgDatabase(const PgDatabase&) = delete;
  PgDatabase& operator=(const PgDatabase&) = delete;

  // One seeding statement and its parameters.
  struct Statement {
    std::string sql;
    std::vector<Value> params;
  };
  // The seeded state `key` names: setup_sql + `seed` on an empty database the
  // first time; after that the reset and `seed`, in one transaction sent in
  // one round trip.
  Status prepare(const std::string& key, const std::string& setup_sql, const std::vector<Statement>& seed);
  // A run is over and nothing will read its state again: the reset and seed
  // of the last prepare() are sent now, without waiting for them, so that the
  // server resets while twice judges the run and starts the next. The next
  // prepare() of the same key then only collects the answer; another key
  // collects it and installs as before. No-op when nothing is prepared.
  void reset_ahead();
  // Task sessions run at `isolation` from the next transaction on.
  Status set_isolation(Isolation isolation);

  // The checker session; a reset sent ahead is collected first.
  PgConnection& checker() {
    collect_reset_ahead();
    return *checker_;
  }
  // How to open another connection to this database.
  const std::string& conninfo() const { return conninfo_; }
  PgConnection& monitor() { return *monitor_; }
  // A session with no transaction open; give it back with release().
  Status acquire(PgSession*& out);
  // Drops what a closed connection would take with it (temporary tables,
  // session settings, advisory locks, prepared statements, LISTENs) and
  // applies the session's own settings again: a task's connection "closes"
  // when its delivery ends, but the session is kept for the next one. The
  // session must have no transaction open. If that fails, the session
  // reconnects (a new backend, as a closed connection would give).
  // set_isolation() closes the sessions: the level is one of their options.
  Status forget_session_state(PgSession& session);
  void release(PgSession* session) { sessions_.release(session); }
  // How runs are reset (kTruncate; kDelete only to measure it).
  void set_reset_method(ResetMethod m) { reset_method_ = m; }
  int resets() const { return resets_; }

 private:
  PgDatabase() = default;
  Status install(const std::string& setup_sql);
  // The settings every task session starts with (isolation, deadlock_timeout
  // by index), as libpq options.
  std::string session_options(int index) const;
  // Waits for the reset reset_ahead() sent; true when it left the seeded
  // state of key_ (else key_ is cleared: the next prepare() installs).
  bool collect_reset_ahead();
  // VACUUM of pg_class every kCatalogVacuumEvery resets (TRUNCATE's dead
  // catalog rows); never of a run's tables.
  Status vacuum_catalog_now_and_then();

  std::string conninfo_;
  std::unique_ptr<PgConnection> checker_;
  std::unique_ptr<PgConnection> monitor_;
  SessionPool<PgSession> sessions_;
  Isolation isolation_ = Isolation::kReadCommitted;
  std::string key_;          // the seeded state the tables hold now ("" = unknown)
  std::string reset_sql_;     // DELETE ... ; SELECT setval(...) for every table and sequence
  std::string truncate_sql_;  // TRUNCATE ... RESTART IDENTITY; SELECT setval(...) likewise
  std::string reset_script_;  // BEGIN; the reset; the seed rows of key_; COMMIT
  bool reset_sent_ = false;   // reset_script_ sent ahead, its answer not yet read
  ResetMethod reset_method_ = ResetMethod::kTruncate;
  int resets_ = 0;
};

}  // namespace twice::engine
