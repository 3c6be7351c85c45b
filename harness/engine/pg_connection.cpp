#include "engine/pg_connection.h"

#include <fmt/format.h>

#include "engine/engine_url.h"
#include "engine/pg_protocol.h"

namespace twice::engine {
namespace {
void ignore_notice(void*, const char*) {}
}  // namespace

void quiet_notices(PGconn* conn) { PQsetNoticeProcessor(conn, ignore_notice, nullptr); }

Status PgConnection::open(const std::string& conninfo, std::unique_ptr<PgConnection>& out) {
  out.reset();
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (!conn) return Status::error("PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(conn);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    for (auto& c : msg)
      if (c == '\n') c = ' ';
    PQfinish(conn);
    // libpq's text may quote what it could not read of `conninfo`, a password too.
    return Status::error(fmt::format("cannot connect to PostgreSQL: {}", without_url_passwords(msg, conninfo)));
  }
  quiet_notices(conn);
  out.reset(new PgConnection(conn));
  return Status::OK();
}

PgConnection::~PgConnection() { PQfinish(conn_); }

Result PgConnection::query(std::string_view sql, const std::vector<Value>& params) {
  const std::string text = to_dollar_placeholders(sql);
  std::vector<std::string> storage;
  const auto values = text_params(params, storage);
  PGresult* r = PQexecParams(conn_, text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                             nullptr, 0);
  Result out = to_result(conn_, r);
  PQclear(r);
  return out;
}

std::vector<Result> PgConnection::query_each(const std::vector<std::string>& sqls) {
  // Only queries that are one statement each can share a query string.
  bool one_each = sqls.size() >= 2;
  for (const auto& sql : sqls)
    if (sql.find(';') != std::string::npos || sql.find('?') != std::string::npos) one_each = false;
  if (!one_each) return RawConnection::query_each(sqls);
  std::string batch;
  for (const auto& sql : sqls) batch += sql + ";";
  std::vector<Result> out;
  out.reserve(sqls.size());
  if (PQsendQuery(conn_, batch.c_str())) {
    // One result per statement, then NULL. A statement that fails ends the
    // batch: its error is its answer; the ones after it run below.
    bool failed = false;
    while (PGresult* r = PQgetResult(conn_)) {
      if (!failed && out.size() < sqls.size()) {
        out.push_back(to_result(conn_, r));
        failed = !out.back().ok();
      }
      PQclear(r);
    }
  }
  for (std::size_t i = out.size(); i < sqls.size(); ++i) out.push_back(query(sqls[i]));
  return out;
}

Status PgConnection::exec_script(const std::string& sql) {
  PGresult* r = PQexec(conn_, sql.c_str());
  Result out = to_result(conn_, r);
  PQclear(r);
  return out.status;
}

}  // namespace twice::engine
