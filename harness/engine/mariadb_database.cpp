#include "engine/mariadb_database.h"

#include <algorithm>

#include <fmt/format.h>

namespace twice::engine {
namespace {

std::string quote_ident(const std::string& name) {
  std::string out = "`";
  for (char c : name) out += c == '`' ? std::string("``") : std::string(1, c);
  return out + "`";
}

std::string set_isolation_sql(Isolation isolation) {
  return fmt::format("SET SESSION TRANSACTION ISOLATION LEVEL {}", isolation_sql(isolation));
}

}  // namespace

Status MariadbDatabase::open(const MariadbAddress& at, const std::string& name,
                             std::unique_ptr<MariadbDatabase>& out) {
  out.reset();
  std::unique_ptr<MariadbDatabase> db(new MariadbDatabase());
  db->address_ = at;
  db->name_ = name;
  if (Status s = MariadbConnection::open(at, name, db->checker_); !s.ok()) return s;
  if (Status s = MariadbConnection::open(at, name, db->monitor_); !s.ok()) return s;
  out = std::move(db);
  return Status::OK();
}

Status MariadbDatabase::install(const std::string& setup_sql) {
  key_.clear();
  // Whatever an earlier key created goes (its triggers with its tables).
  const Result old = checker_->query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name");
  if (!old.ok()) return old.status;
  std::string drop = "SET FOREIGN_KEY_CHECKS = 0;";
  for (const auto& row : old.rows) drop += fmt::format("DROP TABLE IF EXISTS {};", quote_ident(row[0].as_text()));
  drop += "SET FOREIGN_KEY_CHECKS = 1;";
  if (Status s = checker_->exec_script(drop); !s.ok()) return s;
  if (Status s = checker_->exec_script(setup_sql); !s.ok())
    return Status::error("the handler's schema (MariaDB setup SQL): " + s.message());
  // Every table and sequence as the schema left them, with their counters'
  // starts: TRUNCATE sets a table's AUTO_INCREMENT back to 1, not to the
  // start its CREATE TABLE gave, and leaves a SEQUENCE where the run left it.
  const Result tables = checker_->query(
      "SELECT table_name, table_type, auto_increment FROM information_schema.tables "
      "WHERE table_schema = DATABASE() AND table_type IN ('BASE TABLE', 'SEQUENCE') ORDER BY table_name");
  if (!tables.ok()) return tables.status;
  reset_sql_ = "SET FOREIGN_KEY_CHECKS = 0;";
  for (const auto& row : tables.rows) {
    const std::string name = quote_ident(row[0].as_text());
    if (row[1].as_text() == "SEQUENCE") {
      reset_sql_ += fmt::format("ALTER SEQUENCE {} RESTART;", name);  // at its START WITH
      continue;
    }
    reset_sql_ += fmt::format("TRUNCATE TABLE {};", name);
    if (!row[2].is_null() && row[2].as_int() > 1)
      reset_sql_ += fmt::format("ALTER TABLE {} AUTO_INCREMENT = {};", name, row[2].as_int());
  }
  reset_sql_ += "SET FOREIGN_KEY_CHECKS = 1;";
  return Status::OK();
}

Status MariadbDatabase::prepare(const std::string& key, const std::string& setup_sql,
                                const std::vector<Statement>& seed) {
  const bool fresh = key != key_;
  if (fresh) {
    if (Status s = install(setup_sql); !s.ok()) return s;
  }
  // TRUNCATE commits by itself; the seed rows go in one transaction after it.
  std::string script = fresh ? std::string() : reset_sql_;
  script += "START TRANSACTION;";
  for (const auto& st : seed) script += mariadb_inline_parameters(st.sql, st.params) + ";";
  script += "COMMIT;";
  if (Status s = checker_->exec_script(script); !s.ok()) {
    (void)checker_->exec_script("ROLLBACK");
    key_.clear();
    return Status::error("seeding the run's database: " + s.message());
  }
  key_ = key;
  return Status::OK();
}

Status MariadbDatabase::set_isolation(Isolation isolation) {
  if (isolation == isolation_) return Status::OK();
  isolation_ = isolation;
  const std::string sql = set_isolation_sql(isolation);
  for (auto& s : sessions_.all()) {
    // A session is idle here (no statement in flight): a blocking call in
    // non-blocking mode is still allowed by Connector/C.
    if (mysql_real_query(s->conn, sql.data(), sql.size()) != 0)
      return Status::error(fmt::format("cannot set the isolation level: {}", mysql_error(s->conn)));
  }
  return Status::OK();
}

Status MariadbDatabase::configure(MYSQL* conn) const {
  // A lock wait never times out on its own during a run: the scheduler tells
  // a wait from a stall, and a timeout would be wall-clock, not the seed.
  // One statement, one round trip: it runs again after every delivery.
  std::string level(isolation_sql(isolation_));
  std::replace(level.begin(), level.end(), ' ', '-');  // tx_isolation spells READ COMMITTED as READ-COMMITTED
  const std::string setup =
      fmt::format("SET SESSION tx_isolation = '{}', SESSION innodb_lock_wait_timeout = 600", level);
  if (mysql_real_query(conn, setup.data(), setup.size()) != 0)
    return Status::error(fmt::format("cannot configure a MariaDB session: {}", mysql_error(conn)));
  return Status::OK();
}

Status MariadbDatabase::forget_session_state(MariadbSession& session) {
  // COM_RESET_CONNECTION: temporary tables, user and session variables,
  // prepared statements and named locks (GET_LOCK) go, as on a new
  // connection, without one. Idle here: a blocking call is allowed.
  if (mysql_reset_connection(session.conn) == 0) return configure(session.conn);
  return Status::error(fmt::format("cannot reset a MariaDB session: {}", mysql_error(session.conn)));
}

Status MariadbDatabase::acquire(MariadbSession*& out) {
  return sessions_.acquire(out, [this](int, std::unique_ptr<MariadbSession>& session) {
    std::string error;
    MYSQL* conn = connect_mariadb(address_, name_, false, true, error);
    if (!conn) return Status::error(error);
    if (Status s = configure(conn); !s.ok()) {
      mysql_close(conn);
      return s;
    }
    session = std::make_unique<MariadbSession>();
    session->conn = conn;
    session->thread_id = mysql_thread_id(conn);
    return Status::OK();
  });
}

}  // namespace twice::engine
