// MariadbDatabase: one MariaDB database that runs use one after another (a
// worker's), with the connections its runs reuse: a pool of task sessions
// (non-blocking, for the scheduler), a monitor (asks InnoDB whether a
// session waits for a lock, cancels a statement) and a checker (seeds,
// resets, runs the oracle queries).
//
// Per-run state: prepare() brings the database to the seeded state of a
// (schema, scenario) key. The first time for a key it drops every table and
// runs the schema's setup SQL; after that it resets in place: TRUNCATE of
// every table (exact: new empty indexes, no delete-marked records left to
// change which gap locks a run takes, AUTO_INCREMENT back to 1), then the
// seed rows, in one round trip. docs/architecture.md has the figures.
// One thread at a time; a database belongs to one run while leased.
#pragma once

#include <mysql.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/isolation.h"
#include "engine/mariadb_connection.h"
#include "engine/pg_database.h"
#include "engine/session_pool.h"

namespace twice::engine {

// One task connection, in non-blocking mode, closed with it.
struct MariadbSession {
  MariadbSession() = default;
  ~MariadbSession() {
    if (conn) mysql_close(conn);
  }
  MariadbSession(const MariadbSession&) = delete;
  MariadbSession& operator=(const MariadbSession&) = delete;
  MYSQL* conn = nullptr;
  unsigned long thread_id = 0;
  int index = 0;
};

class MariadbDatabase {
 public:
  static Status open(const MariadbAddress& at, const std::string& name, std::unique_ptr<MariadbDatabase>& out);
  MariadbDatabase(const MariadbDatabase&) = delete;
  MariadbDatabase& operator=(const MariadbDatabase&) = delete;

  // One seeding statement and its parameters (the same as PostgreSQL's).
  using Statement = PgDatabase::Statement;
  // The seeded state `key` names: setup_sql + `seed` on an empty database the
  // first time; after that the reset and `seed`.
  Status prepare(const std::string& key, const std::string& setup_sql, const std::vector<Statement>& seed);
  // Task sessions run at `isolation` from the next transaction on.
  Status set_isolation(Isolation isolation);

  MariadbConnection& checker() { return *checker_; }
  MariadbConnection& monitor() { return *monitor_; }
  const std::string& name() const { return name_; }
  // Where the server is, to open other connections to this database.
  const MariadbAddress& address() const { return address_; }
  // A session with no transaction open; give it back with release().
  Status acquire(MariadbSession*& out);
  void release(MariadbSession* session) { sessions_.release(session); }
  // Drops what a closed connection would take with it (temporary tables,
  // user and session variables, prepared statements, GET_LOCK locks) and
  // applies the session's own settings again: a task's connection "closes"
  // when its delivery ends, but the session is kept for the next one.
  Status forget_session_state(MariadbSession& session);

 private:
  MariadbDatabase() = default;
  // The session settings every task session runs with.
  Status configure(MYSQL* conn) const;
  Status install(const std::string& setup_sql);

  MariadbAddress address_;
  std::string name_;
  std::unique_ptr<MariadbConnection> checker_;
  std::unique_ptr<MariadbConnection> monitor_;
  SessionPool<MariadbSession> sessions_;
  Isolation isolation_ = Isolation::kRepeatableRead;
  std::string key_;          // the seeded state the tables hold now ("" = unknown)
  std::string reset_sql_;    // TRUNCATE of every table
};

}  // namespace twice::engine
