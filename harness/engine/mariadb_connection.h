// MariadbConnection: one blocking MariaDB connection (the run's seeding and
// checking, the monitor that asks whether a session waits for a lock, the
// cluster's admin). Owns the MYSQL handle. Not thread-safe.
#pragma once

#include <mysql.h>

#include <memory>
#include <string>

#include "engine/mariadb_protocol.h"
#include "env/raw_connection.h"

namespace twice::engine {

class MariadbConnection final : public env::RawConnection {
 public:
  // Connects to `database` ("" for none); on failure `out` stays empty and
  // the Status names the server's answer.
  static Status open(const MariadbAddress& at, const std::string& database, std::unique_ptr<MariadbConnection>& out);
  ~MariadbConnection() override;
  MariadbConnection(const MariadbConnection&) = delete;
  MariadbConnection& operator=(const MariadbConnection&) = delete;

  Engine engine() const override { return Engine::kMariadb; }
  Result query(std::string_view sql, const std::vector<Value>& params = {}) override;
  // Several statements in one round trip (a trigger's BEGIN ... END body
  // included: the server parses it, no DELIMITER needed); stops at the first error.
  Status exec_script(const std::string& sql) override;

  MYSQL* handle() const { return conn_; }
  unsigned long thread_id() const { return mysql_thread_id(conn_); }

 private:
  explicit MariadbConnection(MYSQL* conn) : conn_(conn) {}
  MYSQL* conn_;
};

}  // namespace twice::engine
