#include "stress/real_env.h"

#include "env/confinement.h"
#include "env/sqlite_db.h"

#include <algorithm>
#include <thread>

namespace twice::stress {
namespace {

// SQLite's own busy_timeout sleeps 1 ms, then 2, 5, 10 ms...: far longer than
// a commit on a WAL file takes, so eight threads queueing for the write lock
// would spend most of the run asleep. This handler starts at 20 us and doubles
// up to 1 ms. `count` is how often it ran for this lock wait, so the time slept
// so far follows from it without any state per connection; real sleeps only
// overshoot, so the wait lasts at least the timeout.
int busy_backoff(void* timeout_us, int count) {
  const Micros timeout = static_cast<Micros>(reinterpret_cast<std::intptr_t>(timeout_us));
  constexpr Micros kFirst = 20;
  constexpr Micros kLongest = 1000;
  constexpr int kDoublings = 6;  // 20 us << 6 > 1 ms
  const Micros delay = count < kDoublings ? std::min(kFirst << count, kLongest) : kLongest;
  const Micros slept = count < kDoublings ? kFirst * ((Micros{1} << count) - 1)
                                          : kFirst * ((Micros{1} << kDoublings) - 1) + (count - kDoublings) * kLongest;
  if (slept >= timeout) return 0;  // give up: the statement fails with SQLITE_BUSY
  std::this_thread::sleep_for(std::chrono::microseconds(delay));
  return 1;
}

using env::bind_params;
using env::column;
using env::status_from;

}  // namespace

sqlite3* open_wal_connection(const std::string& path, Micros busy_timeout, std::string& error) {
  sqlite3* conn = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &conn,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    error = conn ? sqlite3_errmsg(conn) : "out of memory";
    sqlite3_close(conn);
    return nullptr;
  }
  sqlite3_busy_handler(conn, busy_backoff, reinterpret_cast<void*>(static_cast<std::intptr_t>(busy_timeout)));
  // journal_mode=WAL is stored in the file: the first connection switches it,
  // the others find it. Both pragmas may themselves wait on the busy handler.
  char* err = nullptr;
  if (sqlite3_exec(conn, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr, &err) != SQLITE_OK) {
    error = err ? err : "cannot switch to WAL mode";
    sqlite3_free(err);
    sqlite3_close(conn);
    return nullptr;
  }
  env::confine(conn);
  return conn;
}

Micros RealClock::now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - epoch_).count();
}

void RealClock::sleep(Micros duration) {
  if (duration > 0) std::this_thread::sleep_for(std::chrono::microseconds(duration));
}

RealLocks::Table::iterator RealLocks::live(std::string_view key) {
  auto it = entries_.find(key);
  if (it != entries_.end() && it->second.expires_at <= clock_.now()) {
    entries_.erase(it);
    return entries_.end();
  }
  return it;
}

bool RealLocks::set_if_absent(std::string_view key, std::string_view owner, Micros ttl) {
  std::lock_guard lock(mutex_);
  if (live(key) != entries_.end()) return false;
  entries_.insert_or_assign(std::string(key), Entry{std::string(owner), clock_.now() + ttl});
  return true;
}

std::optional<std::string> RealLocks::get(std::string_view key) {
  std::lock_guard lock(mutex_);
  const auto it = live(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.owner;
}

bool RealLocks::del(std::string_view key) {
  std::lock_guard lock(mutex_);
  const auto it = live(key);
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

bool RealLocks::compare_and_delete(std::string_view key, std::string_view owner) {
  std::lock_guard lock(mutex_);
  const auto it = live(key);
  if (it == entries_.end() || it->second.owner != owner) return false;
  entries_.erase(it);
  return true;
}

RealDb::RealDb(const std::string& path, Micros busy_timeout) {
  std::string error;
  conn_ = open_wal_connection(path, busy_timeout, error);
  if (!conn_) open_status_ = Status::error(path + ": " + error);
}

RealDb::~RealDb() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  // An open transaction is rolled back by close, as when a server process dies.
  sqlite3_close(conn_);
}

bool RealDb::in_transaction() const { return conn_ && sqlite3_get_autocommit(conn_) == 0; }

Result RealDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return exec(sql, std::vector<Value>(params));
}

Result RealDb::exec(std::string_view sql, const std::vector<Value>& params) {
  if (!conn_) return failed(open_status_);
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(conn_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    // Empty SQL (or only a comment) prepares "successfully" to no statement.
    if (rc != SQLITE_OK || !stmt)
      return failed(Status::error(rc != SQLITE_OK ? env::prepare_error(conn_) : env::kNoStatement));
    it = statements_.emplace(std::string(sql), stmt).first;
  }
  sqlite3_stmt* stmt = it->second;
  sqlite3_clear_bindings(stmt);
  bind_params(stmt, params);

  Result result;
  const int ncols = sqlite3_column_count(stmt);
  for (int c = 0; c < ncols; ++c) result.columns.emplace_back(sqlite3_column_name(stmt, c));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    Row row;
    row.reserve(static_cast<std::size_t>(ncols));
    for (int c = 0; c < ncols; ++c) row.push_back(column(stmt, c));
    result.rows.push_back(std::move(row));
  }
  // SQLITE_BUSY here means the busy handler gave up: the handler sees it.
  result.status = status_from(conn_, rc);
  if (result.ok()) {
    result.changes = sqlite3_changes64(conn_);
    result.last_insert_id = sqlite3_last_insert_rowid(conn_);
  } else {
    result.rows.clear();
  }
  sqlite3_reset(stmt);
  return result;
}

RealEnv::RealEnv(const std::string& path, Micros busy_timeout, RealLocks& locks, Clock& clock,
                 std::string token_prefix)
    : RealEnv(std::make_unique<RealDb>(path, busy_timeout), locks, clock, std::move(token_prefix)) {}

RealEnv::RealEnv(std::unique_ptr<WorkerDb> db, RealLocks& locks, Clock& clock, std::string token_prefix)
    : db_(std::move(db)), locks_(locks), clock_(clock), token_prefix_(std::move(token_prefix)) {}

std::string RealEnv::token() { return token_prefix_ + "." + std::to_string(++tokens_); }

}  // namespace twice::stress
