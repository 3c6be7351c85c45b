// PgWorkerDb and MariadbWorkerDb: a stress worker's Db on a server engine.
// One plain blocking connection per worker thread (libpq, Connector/C), with
// no scheduler between the statements: a statement that waits for a row lock
// blocks its thread, as in a servlet container, until the server grants the
// lock, detects a deadlock or the lock wait times out.
//
// The server's errors reach the handler as the same Status kinds as in the
// simulator (pg_protocol.h, mariadb_protocol.h): 40001 a serialization
// failure, 40P01 and 1213 a deadlock, 55P03 and 1205 a lock timeout, class
// 23 and duplicate keys a constraint. The lock wait timeout is the stress
// run's busy timeout, SQLite's counterpart. On PostgreSQL a COMMIT that the
// server answers with ROLLBACK (an earlier statement failed) is an error, as
// PgDb makes it; on MariaDB Result::changes is rows matched
// (CLIENT_FOUND_ROWS), as everywhere.
//
// Threads: each object belongs to one worker thread. Opening connections from
// several threads at once is safe (libpq and Connector/C are thread-safe
// per connection).
#pragma once

#include <libpq-fe.h>
#include <mysql.h>

#include <memory>
#include <string>

#include "engine/isolation.h"
#include "engine/mariadb_protocol.h"
#include "stress/worker_db.h"
#include "twice/time.h"

namespace twice::stress {

class PgWorkerDb final : public WorkerDb {
 public:
  // Connects to `conninfo` and sets the session's isolation level and lock
  // timeout; on failure status() says why.
  PgWorkerDb(const std::string& conninfo, engine::Isolation isolation, Micros lock_timeout);
  ~PgWorkerDb() override;
  PgWorkerDb(const PgWorkerDb&) = delete;
  PgWorkerDb& operator=(const PgWorkerDb&) = delete;

  const Status& status() const override { return status_; }
  Result exec(std::string_view sql, std::initializer_list<Value> params = {}) override;
  Result exec(std::string_view sql, const std::vector<Value>& params) override;
  Engine engine() const override { return Engine::kPostgres; }
  bool in_transaction() const override;

 private:
  PGconn* conn_ = nullptr;
  Status status_;
};

class MariadbWorkerDb final : public WorkerDb {
 public:
  // Connects to database `name` at `at` and sets the session's isolation
  // level and innodb_lock_wait_timeout; on failure status() says why.
  MariadbWorkerDb(const engine::MariadbAddress& at, const std::string& name, engine::Isolation isolation,
                  Micros lock_timeout);
  ~MariadbWorkerDb() override;
  MariadbWorkerDb(const MariadbWorkerDb&) = delete;
  MariadbWorkerDb& operator=(const MariadbWorkerDb&) = delete;

  const Status& status() const override { return status_; }
  Result exec(std::string_view sql, std::initializer_list<Value> params = {}) override;
  Result exec(std::string_view sql, const std::vector<Value>& params) override;
  Engine engine() const override { return Engine::kMariadb; }
  bool in_transaction() const override;

 private:
  MYSQL* conn_ = nullptr;
  Status status_;
  // InnoDB rolls a deadlock victim's transaction back, but the server status
  // flag that in_transaction() reads may still say "in a transaction".
  bool rolled_back_ = false;
};

}  // namespace twice::stress
