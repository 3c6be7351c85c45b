#include "env/cached_connection.h"

#include "env/confinement.h"
#include "env/journal_vfs.h"
#include "env/sqlite_db.h"
#include "env/statement_text.h"

namespace twice::env {

CachedConnection::CachedConnection(const std::string& path) : path_(path), conn_(open_database(path)) {
  confine(conn_, &altered_);
}

CachedConnection::~CachedConnection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(conn_);
}

Result CachedConnection::query(std::string_view sql, const std::vector<Value>& params) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(conn_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK || !stmt) {
      Result r;
      r.status = Status::error(rc != SQLITE_OK ? prepare_error(conn_) : kNoStatement);
      return r;
    }
    it = statements_.emplace(std::string(sql), stmt).first;
  }
  return query_prepared(conn_, it->second, params);
}

Status CachedConnection::exec_script(const std::string& sql) {
  const std::string err = env::exec_script(conn_, sql);
  return err.empty() ? Status::OK() : Status::error(err);
}

bool CachedConnection::reusable() const {
  if (altered_ || sqlite3_get_autocommit(conn_) == 0) return false;
  for (sqlite3_stmt* s = sqlite3_next_stmt(conn_, nullptr); s; s = sqlite3_next_stmt(conn_, s))
    if (sqlite3_stmt_busy(s)) return false;
  return true;
}

Result CachedConnection::query_committed(std::string_view sql) {
  Result r = query(sql);
  const int code = sqlite3_extended_errcode(conn_) & 0xff;
  if (r.ok() || (code != SQLITE_BUSY && code != SQLITE_LOCKED)) return r;
  sqlite3* reader = nullptr;
  const std::string uri = "file:" + path_ + "?immutable=1";
  // Through twice-unix: a run's file is held in memory there (env/held_file.h).
  if (sqlite3_open_v2(uri.c_str(), &reader, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                      journal_vfs()) !=
      SQLITE_OK) {
    sqlite3_close(reader);
    return r;  // the locked answer, as it was
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(reader, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) == SQLITE_OK && stmt)
    r = query_prepared(reader, stmt, {});
  sqlite3_finalize(stmt);
  sqlite3_close(reader);
  return r;
}

}  // namespace twice::env
