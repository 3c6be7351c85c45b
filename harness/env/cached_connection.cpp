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

std::optional<unsigned> CachedConnection::data_version() const {
  unsigned version = 0;
  if (sqlite3_file_control(conn_, "main", SQLITE_FCNTL_DATA_VERSION, &version) != SQLITE_OK) return std::nullopt;
  return version;
}

bool CachedConnection::reads_only(std::string_view sql) const {
  const auto it = statements_.find(sql);
  return it != statements_.end() && sqlite3_stmt_readonly(it->second) != 0;
}

const Result* CachedConnection::kept_answer(std::string_view sql) const {
  // Only inside a read transaction that has read: then the pager has checked
  // the file's change counter, and its data version is the one read.
  if (sqlite3_txn_state(conn_, "main") != SQLITE_TXN_READ) return nullptr;
  const auto it = kept_.find(sql);
  if (it == kept_.end()) return nullptr;
  const std::optional<unsigned> now = data_version();
  return now && *now == it->second.data_version ? &it->second.result : nullptr;
}

std::vector<Result> CachedConnection::query_each(const std::vector<std::string>& sqls) {
  // Only around a read of our own: a transaction already open (or a BEGIN
  // refused) leaves the queries as they were, one by one.
  const bool own_transaction =
      sqls.size() > 1 && sqlite3_get_autocommit(conn_) != 0 && query("BEGIN").ok();
  if (!own_transaction) return RawConnection::query_each(sqls);
  // Nothing commits between these reads, so their order is free: those with
  // no kept answer first (the first of them starts the read), then the rest.
  std::vector<Result> out(sqls.size());
  std::vector<bool> done(sqls.size(), false);
  for (std::size_t i = 0; i < sqls.size(); ++i)
    if (!kept_.count(sqls[i])) {
      out[i] = query(sqls[i]);
      done[i] = true;
    }
  for (std::size_t i = 0; i < sqls.size(); ++i) {
    if (done[i]) continue;
    const Result* kept = kept_answer(sqls[i]);
    out[i] = kept ? *kept : query(sqls[i]);
  }
  // A query may have ended the transaction itself (an error that rolls back);
  // then there is nothing left to end.
  if (sqlite3_get_autocommit(conn_) == 0) (void)query("COMMIT");
  return out;
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
  if (r.ok()) {
    // Read on this connection, in a read transaction of its own (autocommit):
    // the data version now is the one this answer was read at.
    const std::optional<unsigned> version = data_version();
    if (sqlite3_get_autocommit(conn_) != 0 && version && reads_only(sql)) {
      auto it = kept_.find(sql);
      if (it == kept_.end()) it = kept_.emplace(std::string(sql), KeptAnswer{0, {}}).first;
      it->second = KeptAnswer{*version, r};
    }
    return r;
  }
  if (code != SQLITE_BUSY && code != SQLITE_LOCKED) return r;
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
