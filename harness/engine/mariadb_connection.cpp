#include "engine/mariadb_connection.h"

namespace twice::engine {

Status MariadbConnection::open(const MariadbAddress& at, const std::string& database,
                               std::unique_ptr<MariadbConnection>& out) {
  out.reset();
  std::string error;
  MYSQL* m = connect_mariadb(at, database, true, false, error);
  if (!m) return Status::error(error);
  out.reset(new MariadbConnection(m));
  return Status::OK();
}

MariadbConnection::~MariadbConnection() { mysql_close(conn_); }

Result MariadbConnection::query(std::string_view sql, const std::vector<Value>& params) {
  const std::string text = mariadb_inline_parameters(sql, params);
  if (mysql_real_query(conn_, text.data(), text.size()) != 0) return mariadb_result(conn_, nullptr);
  MYSQL_RES* res = mysql_store_result(conn_);
  Result out = mariadb_result(conn_, res);
  if (res) mysql_free_result(res);
  return out;
}

Status MariadbConnection::exec_script(const std::string& sql) {
  if (mysql_real_query(conn_, sql.data(), sql.size()) != 0) return mariadb_status(conn_);
  for (;;) {
    if (MYSQL_RES* res = mysql_store_result(conn_)) mysql_free_result(res);
    else if (mysql_field_count(conn_) != 0) return mariadb_status(conn_);
    const int next = mysql_next_result(conn_);
    if (next < 0) return Status::OK();
    if (next > 0) return mariadb_status(conn_);
  }
}

}  // namespace twice::engine
