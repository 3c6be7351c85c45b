#include "env/sqlite_db.h"
#include "env/statement_text.h"

#include <unistd.h>

#include <sys/random.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

#include "env/confinement.h"
#include "env/journal_vfs.h"
#include "env/held_file.h"
#include "env/lock_ledger.h"

namespace twice::env {

Status status_from(sqlite3* conn, int rc) {
  const int primary = rc & 0xff;
  if (primary == SQLITE_OK || primary == SQLITE_DONE || primary == SQLITE_ROW) return Status::OK();
  std::string msg = sqlite3_errmsg(conn);
  if (primary == SQLITE_CONSTRAINT) return Status::constraint(std::move(msg));
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) return Status::busy(std::move(msg));
  return Status::error(std::move(msg));
}

void bind_params(sqlite3_stmt* stmt, std::span<const Value> params) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    const int idx = static_cast<int>(i) + 1;
    const Value& v = params[i];
    if (v.is_null()) sqlite3_bind_null(stmt, idx);
    else if (v.is_integer()) sqlite3_bind_int64(stmt, idx, v.as_int());
    else if (v.is_real()) sqlite3_bind_double(stmt, idx, v.as_real());
    else {
      const std::string_view s = v.text_view();  // SQLite copies it (SQLITE_TRANSIENT)
      sqlite3_bind_text(stmt, idx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    }
  }
}

Value column(sqlite3_stmt* stmt, int c) {
  switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER: return Value(static_cast<long long>(sqlite3_column_int64(stmt, c)));
    case SQLITE_FLOAT: return Value(sqlite3_column_double(stmt, c));
    case SQLITE_NULL: return Value();
    default: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
      return Value(std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
    }
  }
}

namespace {

// Steps `stmt` to the end. On SQLITE_BUSY returns with result.status busy and
// the statement reset, so that it can be retried from the start.
Result step_all(sqlite3* conn, sqlite3_stmt* stmt) {
  Result result;
  const int ncols = sqlite3_column_count(stmt);
  result.columns.reserve(static_cast<std::size_t>(ncols));
  for (int c = 0; c < ncols; ++c) result.columns.emplace_back(sqlite3_column_name(stmt, c));
  const sqlite3_int64 total_before = sqlite3_total_changes64(conn);
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      Row row;
      row.reserve(static_cast<std::size_t>(ncols));
      for (int c = 0; c < ncols; ++c) row.push_back(column(stmt, c));
      result.rows.push_back(std::move(row));
      continue;
    }
    result.status = status_from(conn, rc);
    break;
  }
  if (result.ok()) {
    // sqlite3_changes() still holds the last INSERT/UPDATE/DELETE's count
    // after a BEGIN or a SELECT: only a statement that changed rows reports any.
    result.changes = sqlite3_total_changes64(conn) != total_before ? sqlite3_changes64(conn) : 0;
    result.last_insert_id = sqlite3_last_insert_rowid(conn);
  } else {
    result.rows.clear();
  }
  sqlite3_reset(stmt);
  return result;
}


}  // namespace

// The statement as a reviewer reads it: each parameter replaced by its bound
// value as an SQL literal (string literals in the statement are left alone).
// Numbered as SQLite numbers them: ?NNN is slot NNN (its digits are part of
// the parameter, not text after it), a plain ? is one more than the largest
// slot so far. A parameter with no bound value is shown as written.
std::string describe(std::string_view sql, std::span<const Value> params) {
  std::string out;
  std::size_t largest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') in_string = !in_string;
    if (c != '?' || in_string) {
      out += c;
      continue;
    }
    std::size_t end = i + 1;
    std::size_t slot = 0;
    while (end < sql.size() && sql[end] >= '0' && sql[end] <= '9' && slot < 100000)
      slot = slot * 10 + static_cast<std::size_t>(sql[end++] - '0');
    if (end == i + 1) slot = largest + 1;
    largest = std::max(largest, slot);
    if (slot == 0 || slot > params.size()) {
      out.append(sql.substr(i, end - i));
    } else {
      std::string literal = params[slot - 1].to_sql();
      // Long values (a raw payload) are cut in the trace; the database has them whole.
      if (literal.size() > 64) literal = literal.substr(0, 56) + "...'";
      out += literal;
    }
    i = end - 1;
  }
  return out;
}

std::string summarize(std::string_view sql, const Result& r) {
  if (!r.ok()) return r.status.to_string();
  // Statements that return rows show them; writes show how many rows changed.
  if (!r.columns.empty()) {
    if (r.rows.empty()) return "0 rows";
    std::string out = r.rows.size() == 1 ? "1 row " : fmt::format("{} rows ", r.rows.size());
    for (std::size_t i = 0; i < r.rows.size() && i < 3; ++i) {
      out += "(";
      for (std::size_t c = 0; c < r.rows[i].size(); ++c) {
        if (c) out += ", ";
        out += fmt::format("{}={}", r.columns[c], r.rows[i][c].to_sql());
      }
      out += ")";
    }
    if (r.rows.size() > 3) out += " ...";
    return out;
  }
  const auto word = sql.substr(0, sql.find(' '));
  if (word == "BEGIN" || word == "COMMIT" || word == "ROLLBACK" || word == "END" || word == "SAVEPOINT" ||
      word == "RELEASE")
    return "ok";
  return fmt::format("{} row{} changed", r.changes, r.changes == 1 ? "" : "s");
}


std::string exec_script(sqlite3* conn, const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(conn, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return {};
  std::string msg = err ? err : "unknown error";
  sqlite3_free(err);
  if ((rc & 0xff) == SQLITE_NOMEM) throw std::bad_alloc();
  return msg;
}

// $TWICE_DB_DIR when set (the tests point it at a folder of their own), else
// /dev/shm when there is one, else the temporary folder.
std::string database_folder() {
  if (const char* dir = std::getenv("TWICE_DB_DIR"); dir && *dir) return dir;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

namespace {

// Files a process of twice left when it was killed (SIGKILL, OOM, a signal
// whose default action ends it): no exit path of its own could remove them.
// Their pid names no living process. Swept once per process, at its first
// database; a pid that is alive, or that we may not signal, is left alone.
void sweep_dead_processes_files(const std::filesystem::path& folder) {
  std::error_code ec;
  std::vector<std::filesystem::path> doomed;
  for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with("twice-")) continue;
    const auto dash = name.find('-', 6);
    if (dash == std::string::npos) continue;
    pid_t pid = 0;
    const auto [end_of_pid, parse] = std::from_chars(name.data() + 6, name.data() + dash, pid);
    if (parse != std::errc() || end_of_pid != name.data() + dash || pid <= 0) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) doomed.push_back(it->path());
  }
  for (const auto& p : doomed) std::filesystem::remove(p, ec);
}

// "twice-<pid>-<random>-": the pid lets the parent of a cell's process find
// what a child that died left behind; the random part keeps a file left by a
// dead process whose pid was reused from ever meeting a new run's name.
std::string process_prefix() {
  static std::mutex mutex;
  static pid_t owner = 0;
  static std::string prefix;
  std::lock_guard lock(mutex);
  if (owner != ::getpid()) {  // first call, or first in a forked child
    if (owner == 0) sweep_dead_processes_files(database_folder());  // a forked cell's parent swept already
    owner = ::getpid();
    std::uint64_t nonce = 0;
    if (::getrandom(&nonce, sizeof nonce, 0) != static_cast<ssize_t>(sizeof nonce))
      nonce = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    prefix = fmt::format("twice-{}-{:016x}-", owner, nonce);
  }
  return prefix;
}

}  // namespace

std::string fresh_database_path() {
  static std::atomic<std::uint64_t> counter{0};
  return (std::filesystem::path(database_folder()) / fmt::format("{}{}.db", process_prefix(), counter++)).string();
}

void remove_database(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
  forget_journals(path);
  stop_holding(path);
}

void remove_process_databases(int pid) {
  const std::string prefix = fmt::format("twice-{}-", pid);
  std::error_code ec;
  std::vector<std::filesystem::path> doomed;
  for (std::filesystem::directory_iterator it(database_folder(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().starts_with(prefix)) doomed.push_back(it->path());
  for (const auto& p : doomed) std::filesystem::remove(p, ec);
}

namespace {

// open_database(); `configured` says whether its PRAGMAs took. They read the
// schema, so they fail (and the connection keeps its default journal, and
// loads the schema at its first statement instead) while another connection
// holds the PENDING lock of a COMMIT that waits for readers.
sqlite3* open_connection(const std::string& path, bool& configured) {
  sqlite3* conn = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &conn,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, journal_vfs());
  if (rc != SQLITE_OK) {
    std::string msg = conn ? sqlite3_errmsg(conn) : "out of memory";
    sqlite3_close(conn);
    throw std::runtime_error("cannot open the run's database " + path + ": " + msg);
  }
  configured = exec_script(conn, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;").empty();
  confine(conn);
  return conn;
}

}  // namespace

sqlite3* open_database(const std::string& path) {
  bool configured = false;
  return open_connection(path, configured);
}

Result query(sqlite3* conn, std::string_view sql, const std::vector<Value>& params) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(conn, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK || !stmt) {
    Result r;
    r.status = Status::error(rc != SQLITE_OK ? prepare_error(conn) : kNoStatement);
    return r;
  }
  bind_params(stmt, params);
  Result r = step_all(conn, stmt);
  sqlite3_finalize(stmt);
  return r;
}

Result query_prepared(sqlite3* conn, sqlite3_stmt* stmt, const std::vector<Value>& params) {
  bind_params(stmt, params);
  Result r = step_all(conn, stmt);
  sqlite3_clear_bindings(stmt);
  return r;
}

namespace {

bool has_busy_statement(sqlite3* conn) {
  for (sqlite3_stmt* s = sqlite3_next_stmt(conn, nullptr); s; s = sqlite3_next_stmt(conn, s))
    if (sqlite3_stmt_busy(s)) return true;
  return false;
}

void close_connection(ConnectionPool::Connection& c) {
  for (auto& [sql, stmt] : c.statements) sqlite3_finalize(stmt);
  sqlite3_finalize(c.probe);
  sqlite3_close(c.handle);
}

}  // namespace

ConnectionPool::~ConnectionPool() {
  for (auto& c : all_) close_connection(*c);
}

bool ConnectionPool::idle() const {
  if (idle_.size() + spare_.size() != all_.size()) return false;
  for (const auto& c : all_)
    if (sqlite3_get_autocommit(c->handle) == 0 || has_busy_statement(c->handle)) return false;
  return true;
}

namespace {

// Whether a fresh connection opened now would be configured: its PRAGMAs need
// a SHARED lock, which SQLite refuses while another connection holds PENDING
// or EXCLUSIVE. The lock ledger answers by unixLock's own rule, without a
// statement (reading the schema's first page to find out took a read
// transaction, two fcntl calls and a pread every run: 3% of a schedule,
// issue #12); a connection the ledger does not see reads the page itself.
bool could_read_now(ConnectionPool::Connection& c) {
  if (const std::optional<bool> grantable = shared_grantable(c.handle)) return *grantable;
  if (!c.probe && sqlite3_prepare_v2(c.handle, "SELECT 1 FROM sqlite_master LIMIT 1", -1, &c.probe, nullptr) != SQLITE_OK)
    return false;
  int rc = SQLITE_ROW;
  while (rc == SQLITE_ROW) rc = sqlite3_step(c.probe);
  sqlite3_reset(c.probe);
  return rc == SQLITE_DONE;
}

}  // namespace

ConnectionPool::Connection* ConnectionPool::acquire() {
  if (!idle_.empty()) {
    Connection* c = idle_.back();
    idle_.pop_back();
    return c;
  }
  // A run opens a connection when none of its own is idle. One kept from an
  // earlier run stands in for it only if a fresh one would now be configured;
  // else a fresh one is opened, as before (it starts without its schema, and
  // its first statements may fail to prepare with "database is locked"), and
  // the spare waits for a later chance.
  if (!spare_.empty() && could_read_now(*spare_.back())) {
    Connection* c = spare_.back();
    spare_.pop_back();
    return c;
  }
  auto c = std::make_unique<Connection>();
  bool configured = false;
  c->handle = open_connection(path_, configured);
  c->keep = configured;
  confine(c->handle, &c->altered);
  all_.push_back(std::move(c));
  return all_.back().get();
}

void ConnectionPool::release(Connection* connection) {
  connection->task = 0;
  idle_.push_back(connection);
}

std::vector<int> ConnectionPool::lock_holders(const Connection* self, int held, int refused) const {
  std::vector<int> out;
  for (const auto& c : all_) {
    if (c.get() == self || c->task == 0) continue;
    const int other = held_lock(c->handle);
    // The climb from `held` to `refused`, as RefusedLock::grantable() reads it.
    if ((refused >= SQLITE_LOCK_SHARED && held < SQLITE_LOCK_SHARED && other >= SQLITE_LOCK_PENDING) ||
        (refused >= SQLITE_LOCK_RESERVED && held < SQLITE_LOCK_RESERVED && other >= SQLITE_LOCK_RESERVED) ||
        (refused == SQLITE_LOCK_EXCLUSIVE && held < SQLITE_LOCK_EXCLUSIVE && other >= SQLITE_LOCK_SHARED))
      out.push_back(c->task);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// "T2", "T2 and T5", "T2, T3 and T5".
std::string task_list(const std::vector<int>& tasks) {
  std::string out;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    out += (i == 0 ? "" : i + 1 == tasks.size() ? " and " : ", ") + sim::task_label(tasks[i]);
  return out;
}

}  // namespace

void ConnectionPool::prepare_next_run() {
  std::vector<std::unique_ptr<Connection>> kept;
  idle_.clear();
  spare_.clear();
  for (auto& c : all_) {
    if (c->altered || !c->keep) {
      close_connection(*c);
      continue;
    }
    sqlite3_set_last_insert_rowid(c->handle, 0);
    spare_.push_back(c.get());
    kept.push_back(std::move(c));
  }
  all_ = std::move(kept);
}

SqliteDb::SqliteDb(sim::Scheduler& scheduler, ConnectionPool& pool)
    : scheduler_(scheduler),
      pool_(pool),
      connection_(pool.acquire()),
      conn_(connection_->handle),
      statements_(connection_->statements) {
  connection_->task = scheduler.current();
  (void)RefusedLock::take(conn_);  // a refusal from before this task (the pool's probe) is not its wait
}

bool SqliteDb::wait_for_lock(const std::string& text) {
  // The refused lock is what the task waits for; a SQLITE_BUSY that no lock
  // call answered (none is known) waits until some lock is released.
  const std::optional<RefusedLock> refused = RefusedLock::take(conn_);
  if (scheduler_.tracing()) {
    // Who holds it, so that a story shows that task too (explore/transcript.cpp).
    const std::vector<int> holders =
        refused ? pool_.lock_holders(connection_, held_lock(conn_), refused->level()) : std::vector<int>{};
    scheduler_.record(sim::TraceKind::kSql, text,
                      holders.empty() ? std::string("SQLITE_BUSY, waits for the lock")
                                      : fmt::format("SQLITE_BUSY, waits for the lock{} {} hold{}",
                                                    holders.size() == 1 ? "" : "s", task_list(holders),
                                                    holders.size() == 1 ? "s" : ""));
  }
  if (refused) return scheduler_.block_on_db(*refused);
  return scheduler_.block_on_db();
}

SqliteDb::~SqliteDb() {
  if (in_transaction() && !uncommitted_.empty() && scheduler_.tracing()) {
    std::string undone;
    for (const auto& w : uncommitted_) undone += (undone.empty() ? "" : "; ") + w;
    scheduler_.record(sim::TraceKind::kTask,
                      fmt::format("connection closes with a transaction open: rolled back {} write{}: {}",
                                  uncommitted_.size(), uncommitted_.size() == 1 ? "" : "s", undone));
  } else if (in_transaction()) {
    scheduler_.record(sim::TraceKind::kTask, "connection closes with a transaction open: rolled back (no writes yet)");
  }
  // What the task left open rolls back, as when a process dies or forgets to
  // commit; the connection goes back to the pool clean.
  for (auto& [sql, stmt] : statements_) sqlite3_reset(stmt);
  if (in_transaction()) sqlite3_exec(conn_, "ROLLBACK", nullptr, nullptr, nullptr);
  pool_.release(connection_);
}

bool SqliteDb::in_transaction() const { return sqlite3_get_autocommit(conn_) == 0; }

Result SqliteDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return run(sql, std::span<const Value>(params.begin(), params.size()));  // no copy into a vector
}

Result SqliteDb::exec(std::string_view sql, const std::vector<Value>& params) { return run(sql, params); }

Result SqliteDb::run(std::string_view sql, std::span<const Value> params) {
  // Without a trace the statement's text is never built; `text` stays empty.
  const bool tracing = scheduler_.tracing();
  const std::string text = tracing ? describe(sql, params) : std::string();
  if (!scheduler_.point(text)) {
    Result r;
    r.status = Status::crashed();
    return r;
  }

  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(conn_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    // Reading the schema met another connection's lock: SQLite's busy
    // handler would wait for it, as for a statement's own locks.
    while ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
      if (wait_for_lock(text)) {
        Result r;
        r.status = scheduler_.killed() ? Status::crashed()
                                       : Status::busy("database is locked (every task was waiting: deadlock)");
        if (tracing) scheduler_.record(sim::TraceKind::kSql, text, r.status.to_string());
        return r;
      }
      rc = sqlite3_prepare_v2(conn_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    }
    if (rc != SQLITE_OK || !stmt) {
      // No statement at all (empty, or only a comment) prepares "successfully" to nothing.
      Result r;
      r.status = Status::error(rc != SQLITE_OK ? prepare_error(conn_) : kNoStatement);
      if (tracing) scheduler_.record(sim::TraceKind::kSql, text, summarize(sql, r));
      return r;
    }
    it = statements_.emplace(std::string(sql), stmt).first;
  }
  sqlite3_stmt* stmt = it->second;
  sqlite3_clear_bindings(stmt);
  bind_params(stmt, params);

  // A statement that may publish writes: a COMMIT, or a write outside a
  // transaction. Its watch reads what is committed right before it runs, in
  // the same step (after any wait for a lock).
  const bool commit_word = sql.starts_with("COMMIT") || sql.starts_with("END");
  const bool may_publish = commit_watch_ && (commit_word || (!in_transaction() && !sqlite3_stmt_readonly(stmt)));
  for (;;) {
    if (may_publish) commit_watch_->before_publish();
    Result r = step_all(conn_, stmt);
    // A transaction that holds a read lock and wants the write lock another
    // holds: SQLite answers at once, without its busy handler, since that
    // other's COMMIT may be waiting for this very reader. The transaction
    // stays open (the handler decides: roll back, or try again).
    if (r.status.is_busy() && sqlite3_txn_state(conn_, nullptr) == SQLITE_TXN_READ) {
      const std::optional<RefusedLock> refused = RefusedLock::take(conn_);  // not waited for
      if (tracing) {
        const std::vector<int> holders =
            pool_.lock_holders(connection_, held_lock(conn_), refused ? refused->level() : SQLITE_LOCK_RESERVED);
        scheduler_.record(sim::TraceKind::kSql, text,
                          fmt::format("SQLITE_BUSY at once: this transaction holds a read lock and {} the write lock",
                                      holders.empty() ? std::string("another") : task_list(holders)));
      }
      return r;
    }
    if (r.status.is_busy()) {
      if (wait_for_lock(text)) {
        if (scheduler_.killed()) {
          r.status = Status::crashed();
          return r;
        }
        r.status = Status::busy("database is locked (every task was waiting: deadlock)");
        if (tracing) scheduler_.record(sim::TraceKind::kSql, text, r.status.to_string());
        return r;
      }
      bind_params(stmt, params);
      continue;
    }
    if (tracing) scheduler_.record(sim::TraceKind::kSql, text, summarize(sql, r));
    const bool wrote = r.ok() && !sqlite3_stmt_readonly(stmt) && r.changes > 0;  // RETURNING or not
    if (in_transaction()) {
      if (wrote) uncommitted_.push_back(text);
    } else {
      // A COMMIT publishes the transaction's writes; an autocommit write publishes itself.
      const bool commit = r.ok() && commit_word;
      if (wrote || (commit && !uncommitted_.empty())) {
        committed_writes_ = true;
        if (commit_watch_) commit_watch_->published();
      }
      uncommitted_.clear();
      // Out of a transaction the connection holds no lock: waiters may proceed.
      scheduler_.wake_db_waiters();
    }
    return r;
  }
}

}  // namespace twice::env
