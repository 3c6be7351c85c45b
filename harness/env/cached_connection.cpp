#include "env/cached_connection.h"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "env/confinement.h"
#include "env/journal_vfs.h"
#include "env/sqlite_db.h"
#include "env/statement_text.h"

namespace twice::env {

namespace {

// The row a statement stands on. Each column's type is read once, first: it
// is what column() (env/sqlite_db.h) turns into a Value, and after
// sqlite3_column_text() converted a value its type is no longer reliable.
class StatementRowView final : public RowView {
 public:
  explicit StatementRowView(sqlite3_stmt* stmt) : stmt_(stmt), size_(static_cast<std::size_t>(sqlite3_column_count(stmt))) {
    // A row's types in place: a vector per row was an allocation per row.
    if (size_ > kInline) wide_.resize(size_);
    int* types = size_ > kInline ? wide_.data() : inline_;
    for (std::size_t c = 0; c < size_; ++c) types[c] = sqlite3_column_type(stmt, static_cast<int>(c));
  }
  std::size_t size() const override { return size_; }
  std::string_view text(std::size_t c) const override {
    const int i = static_cast<int>(c);
    switch (type(c)) {
      case SQLITE_INTEGER: return keep(c, std::to_string(sqlite3_column_int64(stmt_, i)));
      case SQLITE_FLOAT: return keep(c, fmt::format("{}", sqlite3_column_double(stmt_, i)));
      case SQLITE_NULL: return {};
      default: return raw_text(i);
    }
  }
  std::int64_t integer(std::size_t c) const override {
    const int i = static_cast<int>(c);
    switch (type(c)) {
      case SQLITE_INTEGER: return sqlite3_column_int64(stmt_, i);
      case SQLITE_FLOAT: return static_cast<std::int64_t>(sqlite3_column_double(stmt_, i));
      case SQLITE_NULL: return 0;
      default: {
        const std::string_view s = raw_text(i);
        std::int64_t out = 0;
        std::from_chars(s.data(), s.data() + s.size(), out);
        return out;
      }
    }
  }

 private:
  // A text or blob value as column() copies it.
  std::string_view raw_text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))) : std::string_view();
  }
  std::string_view keep(std::size_t c, std::string s) const {
    if (scratch_.size() < size_) scratch_.resize(size_);
    scratch_[c] = std::move(s);
    return scratch_[c];
  }
  int type(std::size_t c) const { return size_ > kInline ? wide_[c] : inline_[c]; }

  static constexpr std::size_t kInline = 8;
  sqlite3_stmt* stmt_;
  std::size_t size_;
  int inline_[kInline] = {};
  std::vector<int> wide_;
  mutable std::vector<std::string> scratch_;
};

// Steps `stmt` (no parameters) to its end, each row to `sink` as query
// number `query`, and resets it. The status is step_all()'s
// (env/sqlite_db.cpp).
Status read_rows(sqlite3* conn, sqlite3_stmt* stmt, std::size_t query, const RowSink& sink) {
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) sink(query, StatementRowView(stmt));
  Status status = status_from(conn, rc);
  sqlite3_reset(stmt);
  return status;
}

}  // namespace

CachedConnection::CachedConnection(const std::string& path) : path_(path), conn_(open_database(path)) {
  confine(conn_, &altered_);
}

CachedConnection::~CachedConnection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(conn_);
}

sqlite3_stmt* CachedConnection::statement(std::string_view sql, Status& error) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(conn_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK || !stmt) {
      error = Status::error(rc != SQLITE_OK ? prepare_error(conn_) : kNoStatement);
      return nullptr;
    }
    it = statements_.emplace(std::string(sql), stmt).first;
  }
  return it->second;
}

Result CachedConnection::query(std::string_view sql, const std::vector<Value>& params) {
  Result r;
  sqlite3_stmt* stmt = statement(sql, r.status);
  return stmt ? query_prepared(conn_, stmt, params) : r;
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

void CachedConnection::in_one_read(const std::vector<std::string>& sqls,
                                   const std::function<void(std::size_t, const Result* kept)>& answer) {
  // Only around a read of our own: a transaction already open (or a BEGIN
  // refused) leaves the queries as they were, one by one.
  const bool own_transaction =
      sqls.size() > 1 && sqlite3_get_autocommit(conn_) != 0 && query("BEGIN").ok();
  if (!own_transaction) {
    for (std::size_t i = 0; i < sqls.size(); ++i) answer(i, nullptr);
    return;
  }
  // Nothing commits between these reads, so their order is free: those with
  // no kept answer first (the first of them starts the read), then the rest.
  std::vector<bool> done(sqls.size(), false);
  for (std::size_t i = 0; i < sqls.size(); ++i)
    if (!kept_.count(sqls[i])) {
      answer(i, nullptr);
      done[i] = true;
    }
  for (std::size_t i = 0; i < sqls.size(); ++i)
    if (!done[i]) answer(i, kept_answer(sqls[i]));
  // A query may have ended the transaction itself (an error that rolls back);
  // then there is nothing left to end.
  if (sqlite3_get_autocommit(conn_) == 0) (void)query("COMMIT");
}

std::vector<Result> CachedConnection::query_each(const std::vector<std::string>& sqls) {
  std::vector<Result> out(sqls.size());
  in_one_read(sqls, [&](std::size_t i, const Result* kept) { out[i] = kept ? *kept : query(sqls[i]); });
  return out;
}

std::vector<Status> CachedConnection::read_each(const std::vector<std::string>& sqls, const RowSink& sink) {
  std::vector<Status> out(sqls.size());
  in_one_read(sqls, [&](std::size_t i, const Result* kept) {
    if (kept) {
      for (const Row& row : kept->rows) sink(i, ValueRowView(row));
      out[i] = kept->status;
      return;
    }
    // The checker sends the same texts every run: one comparison with the
    // last batch's text at this place instead of a search of statements_.
    if (batch_.size() <= i) batch_.resize(i + 1);
    sqlite3_stmt* stmt = batch_[i].first == sqls[i] ? batch_[i].second : nullptr;
    if (!stmt && (stmt = statement(sqls[i], out[i]))) batch_[i] = {sqls[i], stmt};
    if (stmt) out[i] = read_rows(conn_, stmt, i, sink);
  });
  return out;
}

bool CachedConnection::reusable() const {
  if (altered_ || sqlite3_get_autocommit(conn_) == 0) return false;
  for (sqlite3_stmt* s = sqlite3_next_stmt(conn_, nullptr); s; s = sqlite3_next_stmt(conn_, s))
    if (sqlite3_stmt_busy(s)) return false;
  return true;
}

Result CachedConnection::query_committed(std::string_view sql) { return read_committed(sql); }

namespace {

// Binds the key to a keyed statement (keyed_text()): ?1 the key as text,
// ?2 as the integer and ?3 as the real that read as it (left null when none
// does), ?4 its bytes as a blob. Then hands `visit` the rows whose first
// column reads as `key`, until it returns true; resets the statement.
// Empty when a step failed: `code` is SQLite's.
std::optional<bool> visit_keyed(sqlite3_stmt* stmt, std::string_view key,
                                const std::function<bool(const RowView&)>& visit, int& code) {
  const int size = static_cast<int>(key.size());
  sqlite3_bind_text(stmt, 1, key.data(), size, SQLITE_TRANSIENT);
  // A value reads as text the way StatementRowView::text() and
  // Value::as_text() write it: an integer as std::to_string does, a real as
  // fmt's shortest form. So only the key's own integer and real can.
  std::int64_t integer = 0;
  const char* end = key.data() + key.size();
  if (auto [p, ec] = std::from_chars(key.data(), end, integer); ec == std::errc() && p == end &&
      std::to_string(integer) == key)
    sqlite3_bind_int64(stmt, 2, integer);
  double real = 0;
  if (auto [p, ec] = std::from_chars(key.data(), end, real); ec == std::errc() && p == end &&
      fmt::format("{}", real) == key)
    sqlite3_bind_double(stmt, 3, real);
  sqlite3_bind_blob(stmt, 4, key.data(), size, SQLITE_TRANSIENT);
  bool found = false;
  while (!found && (code = sqlite3_step(stmt)) == SQLITE_ROW) {
    const StatementRowView row(stmt);
    found = row.size() > 0 && row.text(0) == key && visit(row);
  }
  const bool failed = !found && code != SQLITE_DONE;
  if (failed) code = sqlite3_extended_errcode(sqlite3_db_handle(stmt)) & 0xff;
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (failed) return std::nullopt;
  return found;
}

bool locked(int code) { return code == SQLITE_BUSY || code == SQLITE_LOCKED; }

}  // namespace

const std::string* CachedConnection::keyed_text(std::string_view sql) {
  if (auto it = keyed_.find(sql); it != keyed_.end()) return it->second.empty() ? nullptr : &it->second;
  Status error;
  sqlite3_stmt* stmt = statement(sql, error);
  // Not known yet while the schema cannot be read (locked): asked again next time.
  if (!stmt && locked(sqlite3_extended_errcode(conn_) & 0xff)) return nullptr;
  std::string text;
  const int columns = stmt && sqlite3_stmt_readonly(stmt) ? sqlite3_column_count(stmt) : 0;
  if (columns > 0) {
    // `sql` is the inside of a CTE whose columns get names of ours (the
    // query's own may be expressions, or clash). Its rows pass when the
    // first column is the key as text (under the column's affinity and a
    // built-in collation, a text that is the key's bytes is), the integer
    // or the real that reads as the key, or its bytes (a blob); a parameter
    // left unbound is null, so a null (which reads as "") passes whenever
    // the key is no number, the empty key included. So every row whose
    // first column reads as the key passes, and find_row()'s own test keeps
    // exactly those: the rows visited are the whole answer's. Plain
    // comparisons, which SQLite takes into each table's scan (a typeof() in
    // the filter made the check 15% dearer) and which an index on the column
    // serves, a search per term. A newline before the closing parenthesis
    // ends a comment at the end of `sql`.
    std::string names;
    for (int c = 1; c <= columns; ++c) names += fmt::format("{}twice_c{}", c > 1 ? ", " : "", c);
    std::string_view body = sql;
    while (!body.empty() && (body.back() == ';' || std::isspace(static_cast<unsigned char>(body.back()))))
      body.remove_suffix(1);
    text = fmt::format(
        "WITH twice_committed({}) AS (\n{}\n) SELECT * FROM twice_committed "
        "WHERE twice_c1 IS ?1 OR twice_c1 IS ?2 OR twice_c1 IS ?3 OR twice_c1 IS ?4",
        names, body);
    // One that does not prepare (several statements, a statement a CTE
    // cannot hold) is read whole, as before.
    if (Status wrapped; !statement(text, wrapped)) {
      if (locked(sqlite3_extended_errcode(conn_) & 0xff)) return nullptr;
      text.clear();
    }
  }
  auto it = keyed_.emplace(std::string(sql), std::move(text)).first;
  return it->second.empty() ? nullptr : &it->second;
}

bool CachedConnection::find_committed(std::string_view sql, std::string_view key,
                                      const std::function<bool(const RowView&)>& visit) {
  // The order's rows only, read where SQLite finds them: reading the whole
  // answer at every ack made the ack-time check grow with the square of the
  // orders (three quarters of a spread of 128's instructions, issue #12).
  // A small answer is still read whole: that costs less than the keyed
  // read's scan, and the whole answer, kept, serves the checker at
  // quiescence when nothing committed after the ack. Which way it is read
  // changes no answer (the keyed rows are the whole answer's for the key).
  const auto kept = kept_.find(sql);
  const bool small = kept != kept_.end() && kept->second.result.rows.size() <= kReadWholeUpTo;
  if (const std::string* keyed = small || kept == kept_.end() ? nullptr : keyed_text(sql)) {
    Status error;
    int code = SQLITE_OK;
    if (sqlite3_stmt* stmt = statement(*keyed, error)) {
      if (const std::optional<bool> found = visit_keyed(stmt, key, visit, code)) return *found;
    }
    if (locked(code)) {
      // A COMMIT waiting for readers holds PENDING: the committed state is
      // the file's (query_committed()).
      std::optional<bool> found;
      on_the_file(*keyed, [&](sqlite3_stmt* stmt) { found = visit_keyed(stmt, key, visit, code); });
      if (found) return *found;
    }
  }
  // Read whole: small, not keyable, or the keyed read failed (then a row it
  // handed on before failing is handed on again; the ack-time check only
  // asks whether any row answers).
  return find_row(read_committed(sql), key, visit);  // the kept rows themselves, not a copy
}

bool CachedConnection::on_the_file(std::string_view sql, const std::function<void(sqlite3_stmt*)>& read) const {
  sqlite3* reader = nullptr;
  const std::string uri = "file:" + path_ + "?immutable=1";
  // Through twice-unix: a run's file is held in memory there (env/held_file.h).
  if (sqlite3_open_v2(uri.c_str(), &reader, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                      journal_vfs()) != SQLITE_OK) {
    sqlite3_close(reader);
    return false;
  }
  sqlite3_stmt* stmt = nullptr;
  const bool prepared =
      sqlite3_prepare_v2(reader, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) == SQLITE_OK && stmt;
  if (prepared) read(stmt);
  sqlite3_finalize(stmt);
  sqlite3_close(reader);
  return prepared;
}

const Result& CachedConnection::read_committed(std::string_view sql) {
  last_ = query(sql);
  const int code = sqlite3_extended_errcode(conn_) & 0xff;
  if (last_.ok()) {
    // Read on this connection, in a read transaction of its own (autocommit):
    // the data version now is the one this answer was read at.
    const std::optional<unsigned> version = data_version();
    if (sqlite3_get_autocommit(conn_) != 0 && version && reads_only(sql)) {
      auto it = kept_.find(sql);
      if (it == kept_.end()) it = kept_.emplace(std::string(sql), KeptAnswer{0, {}}).first;
      it->second.data_version = *version;
      it->second.result = std::move(last_);
      return it->second.result;
    }
    return last_;
  }
  if (!locked(code)) return last_;
  // Else the locked answer stays, as it was.
  on_the_file(sql, [&](sqlite3_stmt* stmt) { last_ = query_prepared(sqlite3_db_handle(stmt), stmt, {}); });
  return last_;
}

}  // namespace twice::env
