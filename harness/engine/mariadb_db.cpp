#include "engine/mariadb_db.h"

#include <mysqld_error.h>
#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "env/statement_text.h"

namespace twice::engine {
namespace {

// How long a statement may take before InnoDB is asked whether it waits for
// a lock. A statement on a Unix socket answers in tens of microseconds.
constexpr int kSlowMs = 1;

bool is_word(std::string_view sql, std::string_view word) {
  if (sql.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(sql[i])) != word[i]) return false;
  return sql.size() == word.size() || sql[word.size()] == ' ' || sql[word.size()] == ';';
}

bool is_transaction_control(std::string_view sql) {
  for (std::string_view word : {"BEGIN", "START", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "SET", "LOCK",
                                "UNLOCK", "XA"})
    if (is_word(sql, word)) return true;
  return false;
}

short poll_events(int wait) {
  short e = 0;
  if (wait & MYSQL_WAIT_READ) e |= POLLIN;
  if (wait & MYSQL_WAIT_WRITE) e |= POLLOUT;
  if (wait & MYSQL_WAIT_EXCEPT) e |= POLLPRI;
  return e;
}

// What SHOW ENGINE INNODB STATUS says of the transaction of MariaDB thread
// `thread`: whether it waits for a lock, and the id of its statement.
struct TrxState {
  bool lock_wait = false;
  unsigned long query_id = 0;
};

TrxState find_trx(const std::string& status, unsigned long thread) {
  TrxState out;
  // Only the list of transactions: the LATEST DETECTED DEADLOCK section
  // before it names threads too, as they were then.
  const std::size_t list = status.find("\nLIST OF TRANSACTIONS FOR EACH SESSION:");
  if (list == std::string::npos) return out;
  const std::string needle = fmt::format("MariaDB thread id {},", thread);
  const std::size_t at = status.find(needle, list);
  if (at == std::string::npos) return out;
  // The transaction's block: from its "---TRANSACTION" line to the next one.
  std::size_t begin = status.rfind("---TRANSACTION", at);
  if (begin == std::string::npos || begin < list) begin = list;
  std::size_t end = status.find("---TRANSACTION", at);
  if (end == std::string::npos) end = status.size();
  const std::string_view block(status.data() + begin, end - begin);
  out.lock_wait = block.find("\nLOCK WAIT ") != std::string_view::npos;
  const std::size_t q = status.find("query id ", at);
  if (q != std::string::npos && q < end) out.query_id = std::strtoul(status.c_str() + q + 9, nullptr, 10);
  return out;
}

}  // namespace

std::vector<const ServerSession*> MariadbRun::blockers(const ServerSession& s) {
  auto& db = const_cast<MariadbDb&>(static_cast<const MariadbDb&>(s));  // every session here is a MariadbDb
  const Result r = database_.monitor().query("SHOW ENGINE INNODB STATUS");
  if (!r.ok() || r.empty() || r.rows[0].size() < 3) return {};
  const TrxState t = find_trx(r.rows[0][2].as_text(), db.thread_id());
  if (t.query_id) db.set_query_id(t.query_id);
  if (!t.lock_wait) return {};
  return {nullptr};
}

bool MariadbRun::must_queue(const ServerSession& s, const std::vector<const ServerSession*>&) const {
  for (const ServerSession* o : open_sessions())
    if (o != &s && o->waiting()) return true;
  return false;
}

std::unique_ptr<env::TaskDb> MariadbRun::open() { return std::make_unique<MariadbDb>(*this); }

MariadbDb::MariadbDb(MariadbRun& run) : ServerSession(run.scheduler().current()), run_(run), scheduler_(run.scheduler()) {
  broken_ = run_.database().acquire(session_);
  run_.opened(this);
}

MariadbDb::~MariadbDb() {
  if (session_) {
    if (in_flight()) abandon();
    has_kept_ = false;
    if (in_transaction()) {
      if (!uncommitted_.empty() && scheduler_.tracing()) {
        std::string undone;
        for (const auto& w : uncommitted_) undone += (undone.empty() ? "" : "; ") + w;
        scheduler_.record(sim::TraceKind::kTask,
                          fmt::format("connection closes with a transaction open: rolled back {} write{}: {}",
                                      uncommitted_.size(), uncommitted_.size() == 1 ? "" : "s", undone));
      } else {
        scheduler_.record(sim::TraceKind::kTask,
                          "connection closes with a transaction open: rolled back (no writes yet)");
      }
      (void)run_now("ROLLBACK");
    }
  }
  run_.closed(this);
  // Its locks are gone: waiters may now proceed.
  run_.settle(nullptr);
  run_.wake_queued();
  if (session_) run_.database().release(session_);
}

bool MariadbDb::in_transaction() const {
  if (!session_ || rolled_back_) return false;
  unsigned int status = 0;
  mariadb_get_infov(session_->conn, MARIADB_CONNECTION_SERVER_STATUS, &status);
  return (status & SERVER_STATUS_IN_TRANS) != 0;
}

int MariadbDb::socket() const { return static_cast<int>(mysql_get_socket(session_->conn)); }

void MariadbDb::send(const std::string& text) {
  rolled_back_ = false;
  phase_ = Phase::kQuery;
  query_error_ = 0;
  query_id_ = 0;
  result_ = nullptr;
  wait_ = mysql_real_query_start(&query_error_, session_->conn, text.data(), text.size());
  if (wait_ == 0) {
    if (query_error_) {
      phase_ = Phase::kAnswered;
      return;
    }
    phase_ = Phase::kStore;
    wait_ = mysql_store_result_start(&result_, session_->conn);
    if (wait_ == 0) phase_ = Phase::kAnswered;
  }
}

bool MariadbDb::answer_arrived(int timeout_ms) {
  for (;;) {
    if (phase_ == Phase::kAnswered || phase_ == Phase::kIdle) return true;
    pollfd fd{socket(), poll_events(wait_), 0};
    const int n = ::poll(&fd, 1, timeout_ms);
    if (n <= 0) return false;
    timeout_ms = 0;
    int ready = 0;
    if (fd.revents & (POLLIN | POLLERR | POLLHUP)) ready |= MYSQL_WAIT_READ;
    if (fd.revents & POLLOUT) ready |= MYSQL_WAIT_WRITE;
    if (fd.revents & POLLPRI) ready |= MYSQL_WAIT_EXCEPT;
    if (phase_ == Phase::kQuery) {
      wait_ = mysql_real_query_cont(&query_error_, session_->conn, ready);
      if (wait_ != 0) continue;
      if (query_error_) {
        phase_ = Phase::kAnswered;
        continue;
      }
      phase_ = Phase::kStore;
      wait_ = mysql_store_result_start(&result_, session_->conn);
      if (wait_ == 0) phase_ = Phase::kAnswered;
    } else {
      wait_ = mysql_store_result_cont(&result_, session_->conn, ready);
      if (wait_ == 0) phase_ = Phase::kAnswered;
    }
  }
}

Result MariadbDb::take() {
  while (!answer_arrived(100)) {
  }
  Result r = mariadb_result(session_->conn, query_error_ ? nullptr : result_);
  if (result_) mysql_free_result(result_);
  result_ = nullptr;
  phase_ = Phase::kIdle;
  return r;
}

bool MariadbDb::cancel() {
  // KILL QUERY ID, not KILL QUERY: should the statement end first, the kill
  // must not hit this session's next one. Then wait for the answer:
  // "interrupted" if the kill reached the statement, the statement's own
  // result if that came first (kept for finish()). A kill that found no such
  // query is sent again with the id the server shows now.
  for (;;) {
    if (query_id_ == 0) {
      // PROCESSLIST (not cached, unlike the InnoDB tables) knows the id of
      // whatever the session runs, also a statement InnoDB's list lacks.
      const Result id = run_.database().monitor().query(
          "SELECT QUERY_ID FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Query'",
          {static_cast<long long>(thread_id())});
      if (id.ok() && !id.empty()) query_id_ = static_cast<unsigned long>(id.rows[0][0].as_int());
    }
    if (query_id_ != 0) (void)run_.database().monitor().query(fmt::format("KILL QUERY ID {}", query_id_));
    if (answer_arrived(100)) break;
    query_id_ = 0;
  }
  const bool interrupted = query_error_ && mysql_errno(session_->conn) == ER_QUERY_INTERRUPTED;
  Result r = take();
  if (interrupted) return true;
  kept_ = std::move(r);
  has_kept_ = true;
  return false;
}

void MariadbDb::abandon() {
  if (!cancel()) has_kept_ = false;
}

Status MariadbDb::run_now(const std::string& sql) {
  if (mysql_real_query(session_->conn, sql.data(), sql.size()) != 0) return mariadb_status(session_->conn);
  if (MYSQL_RES* res = mysql_store_result(session_->conn)) mysql_free_result(res);
  return Status::OK();
}

Result MariadbDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return exec(sql, std::vector<Value>(params));
}

Result MariadbDb::exec(std::string_view sql, const std::vector<Value>& params) {
  const bool tracing = scheduler_.tracing();
  const std::string text = tracing ? env::describe(sql, params) : std::string();
  if (!scheduler_.point(text)) {
    Result r;
    r.status = Status::crashed();
    return r;
  }
  auto failed = [&](Status s) {
    Result r;
    r.status = std::move(s);
    if (tracing) scheduler_.record(sim::TraceKind::kSql, text, env::summarize(sql, r));
    return r;
  };
  if (!broken_.ok()) return failed(broken_);
  const std::string query = mariadb_inline_parameters(sql, params);

  bool told_waiting = false;
  for (;;) {
    // As on PostgreSQL: a statement that may have to be cancelled gets a
    // savepoint first, when another one waits (never around transaction control).
    const bool savepoint = in_transaction() && !is_transaction_control(sql) && run_.any_waiting();
    const bool cancellable = savepoint || !in_transaction();
    if (savepoint) {
      if (Status s = run_now("SAVEPOINT twice_statement"); !s.ok()) return failed(s);
    }
    send(query);
    bool requeue = false;
    for (;;) {
      if (answer_arrived(kSlowMs)) break;
      std::vector<const ServerSession*> blockers = run_.blockers(*this);
      if (blockers.empty()) continue;  // slow, not blocked: keep waiting
      if (run_.any_waiting()) {
        // Another waiter may be on its way out (a deadlock victim rolling
        // back, whose locks this statement waits for): let the others settle
        // first, so that what this one sees does not depend on that race.
        run_.settle(this);
        if (answer_arrived(0)) break;
        blockers = run_.blockers(*this);
        if (blockers.empty()) continue;
      }
      if (tracing && !told_waiting)
        scheduler_.record(sim::TraceKind::kSql, text, "waits for a lock another transaction holds");
      told_waiting = true;
      const bool queue = cancellable && !no_queue_ && run_.must_queue(*this, blockers);
      if (queue && cancel()) {
        if (savepoint && (!run_now("ROLLBACK TO SAVEPOINT twice_statement").ok() ||
                          !run_now("RELEASE SAVEPOINT twice_statement").ok()))
          return failed(Status::error("cannot return to the savepoint before a cancelled statement"));
        requeue = true;
        break;
      }
      if (has_kept_) break;  // answered before the cancel reached it
      waits_for_ = std::move(blockers);
      const bool everyone_waits = scheduler_.block_on_db();
      if (scheduler_.killed()) {
        abandon();
        Result r;
        r.status = Status::crashed();
        return r;
      }
      if (everyone_waits) {
        if (run_.any_queued()) {
          run_.wake_queued_for_deadlock();
        } else if (!run_.wait_for_any()) {
          abandon();
          return failed(Status::busy("every task waits for a lock and the server resolved nothing for two minutes"));
        }
      }
    }
    if (!requeue) {
      waits_for_.clear();
      no_queue_ = false;
      Result r;
      if (has_kept_) {
        r = std::move(kept_);
        has_kept_ = false;
      } else {
        r = take();
      }
      return finish(sql, text, savepoint, std::move(r));
    }
    // Parked without a statement on the server, until a transaction ends.
    queued_ = true;
    const bool everyone_waits = scheduler_.block_on_db();
    queued_ = false;
    if (scheduler_.killed()) {
      Result r;
      r.status = Status::crashed();
      return r;
    }
    if (everyone_waits) no_queue_ = true;
  }
}

Result MariadbDb::finish(std::string_view sql, const std::string& text, bool savepoint, Result r) {
  if (r.status.is_deadlock()) rolled_back_ = true;
  if (savepoint && r.ok()) {
    if (Status s = run_now("RELEASE SAVEPOINT twice_statement"); !s.ok())
      r.status = Status::error("releasing the savepoint around the statement: " + s.message());
  }
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kSql, text, env::summarize(sql, r));

  const bool wrote = r.ok() && r.changes > 0 && r.columns.empty();
  if (in_transaction()) {
    if (wrote) uncommitted_.push_back(text);
  } else {
    const bool commit = r.ok() && is_word(sql, "COMMIT");
    if (wrote || (commit && !uncommitted_.empty())) committed_writes_ = true;
    uncommitted_.clear();
  }
  // Locks may have been released (a transaction ended, a statement failed):
  // let the server settle the other statements in flight before anyone runs.
  run_.settle(this);
  if (!r.ok() || !in_transaction()) run_.wake_queued();
  return r;
}

}  // namespace twice::engine
