#include "stress/server_worker_db.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "engine/engine_url.h"
#include "engine/pg_connection.h"
#include "engine/pg_protocol.h"

namespace twice::stress {
namespace {

bool starts_with_word(std::string_view sql, std::string_view word) {
  while (!sql.empty() && std::isspace(static_cast<unsigned char>(sql.front()))) sql.remove_prefix(1);
  if (sql.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(sql[i])) != word[i]) return false;
  return sql.size() == word.size() || sql[word.size()] == ' ' || sql[word.size()] == ';';
}

// Whole milliseconds, at least 1: 0 would mean "wait forever" on both servers.
long long lock_timeout_ms(Micros timeout) { return std::max<long long>(1, (timeout + kMillisecond - 1) / kMillisecond); }

}  // namespace

PgWorkerDb::PgWorkerDb(const std::string& conninfo, engine::Isolation isolation, Micros lock_timeout) {
  conn_ = PQconnectdb(conninfo.c_str());
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    std::string msg = conn_ ? PQerrorMessage(conn_) : "out of memory";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    status_ = Status::error("cannot connect to PostgreSQL: " + engine::without_url_passwords(msg, conninfo));
    return;
  }
  engine::quiet_notices(conn_);
  const std::string setup = fmt::format("SET default_transaction_isolation = '{}'; SET lock_timeout = '{}ms'",
                                        engine::isolation_sql(isolation), lock_timeout_ms(lock_timeout));
  PGresult* r = PQexec(conn_, setup.c_str());
  status_ = engine::to_result(conn_, r).status;
  PQclear(r);
}

PgWorkerDb::~PgWorkerDb() {
  // An open transaction is rolled back by the server when the connection
  // closes, as when a server process dies.
  if (conn_) PQfinish(conn_);
}

bool PgWorkerDb::in_transaction() const {
  if (!status_.ok()) return false;
  const PGTransactionStatusType t = PQtransactionStatus(conn_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

Result PgWorkerDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return exec(sql, std::vector<Value>(params));
}

Result PgWorkerDb::exec(std::string_view sql, const std::vector<Value>& params) {
  if (!status_.ok()) return failed(status_);
  const std::string text = engine::to_dollar_placeholders(sql);
  std::vector<std::string> storage;
  const auto values = engine::text_params(params, storage);
  PGresult* last = PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                                nullptr, 0);
  Result r = engine::to_result(conn_, last);
  // As PgDb: COMMIT of a transaction an earlier error aborted answers
  // ROLLBACK; the handler must not take it for a commit.
  if (r.ok() && last && starts_with_word(sql, "COMMIT") && std::string_view(PQcmdStatus(last)) == "ROLLBACK")
    r.status = Status::error("COMMIT rolled back: an earlier statement of the transaction failed");
  PQclear(last);
  return r;
}

MariadbWorkerDb::MariadbWorkerDb(const engine::MariadbAddress& at, const std::string& name,
                                 engine::Isolation isolation, Micros lock_timeout) {
  std::string error;
  conn_ = engine::connect_mariadb(at, name, false, false, error);
  if (!conn_) {
    status_ = Status::error(error);
    return;
  }
  // innodb_lock_wait_timeout takes whole seconds.
  const long long seconds = std::max<long long>(1, (lock_timeout + kSecond - 1) / kSecond);
  const std::string setup[] = {
      fmt::format("SET SESSION TRANSACTION ISOLATION LEVEL {}", engine::isolation_sql(isolation)),
      fmt::format("SET SESSION innodb_lock_wait_timeout = {}", seconds)};
  for (const auto& sql : setup) {
    if (mysql_real_query(conn_, sql.data(), sql.size()) != 0) {
      status_ = Status::error(fmt::format("cannot configure a MariaDB session: {}", mysql_error(conn_)));
      return;
    }
  }
}

MariadbWorkerDb::~MariadbWorkerDb() {
  if (conn_) mysql_close(conn_);
}

bool MariadbWorkerDb::in_transaction() const {
  if (!status_.ok() || rolled_back_) return false;
  unsigned int status = 0;
  mariadb_get_infov(conn_, MARIADB_CONNECTION_SERVER_STATUS, &status);
  return (status & SERVER_STATUS_IN_TRANS) != 0;
}

Result MariadbWorkerDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return exec(sql, std::vector<Value>(params));
}

Result MariadbWorkerDb::exec(std::string_view sql, const std::vector<Value>& params) {
  if (!status_.ok()) return failed(status_);
  rolled_back_ = false;
  const std::string text = engine::mariadb_inline_parameters(sql, params);
  if (mysql_real_query(conn_, text.data(), text.size()) != 0) {
    Result r = engine::mariadb_result(conn_, nullptr);
    if (r.status.is_deadlock()) rolled_back_ = true;
    return r;
  }
  MYSQL_RES* res = mysql_store_result(conn_);
  Result r = engine::mariadb_result(conn_, res);
  if (res) mysql_free_result(res);
  return r;
}

}  // namespace twice::stress
