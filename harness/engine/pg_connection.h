// PgConnection: one blocking libpq connection (the run's seeding and
// checking, the monitor that asks whether a session is blocked). Owns the
// PGconn. Not thread-safe.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "env/raw_connection.h"

namespace twice::engine {

class PgConnection final : public env::RawConnection {
 public:
  // Connects; on failure `out` stays empty and the Status names the server's answer.
  static Status open(const std::string& conninfo, std::unique_ptr<PgConnection>& out);
  ~PgConnection() override;
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  Engine engine() const override { return Engine::kPostgres; }
  Result query(std::string_view sql, const std::vector<Value>& params = {}) override;
  Status exec_script(const std::string& sql) override;
  // One query string of every query (when each is one statement without
  // placeholders), one round trip, one answer per query. A query that fails
  // ends the string there; the ones after it then run one by one, so that
  // each answers exactly what query() would.
  std::vector<Result> query_each(const std::vector<std::string>& sqls) override;

  PGconn* handle() const { return conn_; }
  int backend_pid() const { return PQbackendPID(conn_); }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  PGconn* conn_;
};

// Silences the server's NOTICEs (DROP ... IF EXISTS and the like) on `conn`.
void quiet_notices(PGconn* conn);

}  // namespace twice::engine
