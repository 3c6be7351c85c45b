#include "engine/mariadb_db.h"

#include <mysqld_error.h>
#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "engine/sql_words.h"
#include "engine/statement_patience.h"

namespace twice::engine {
namespace {

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

// Where the status's list of transactions starts (npos: none). Only that
// list says what waits now: the LATEST DETECTED DEADLOCK section before it
// names threads and waits too, as they were then.
std::size_t transaction_list(const std::string& status) {
  return status.find("\nLIST OF TRANSACTIONS FOR EACH SESSION:");
}

TrxState find_trx(const std::string& status, unsigned long thread) {
  TrxState out;
  const std::size_t list = transaction_list(status);
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

std::size_t count_lock_waits(const std::string& status) {
  const std::size_t list = transaction_list(status);
  if (list == std::string::npos) return 0;
  std::size_t n = 0;
  for (std::size_t at = status.find("\nLOCK WAIT ", list); at != std::string::npos;
       at = status.find("\nLOCK WAIT ", at + 1))
    ++n;
  return n;
}

std::vector<const ServerSession*> MariadbRun::blockers(const ServerSession& s) {
  auto& db = const_cast<MariadbDb&>(static_cast<const MariadbDb&>(s));  // every session here is a MariadbDb
  // Another statement of the run waits on the server: this one may close a
  // cycle with it. InnoDB looks for the cycle in the waiting thread, after
  // it enqueued its lock (lock_wait() in lock0lock.cc), and counts the wait
  // in Innodb_row_lock_current_waits only then. A statement seen waiting
  // before that is taken for slow: were it queued now, the KILL would cancel
  // its wait before the check, and the same seed would find the deadlock
  // later or not at all (docs/architecture.md, "A race on MariaDB").
  // The count is read first: a wait it counts and the status still shows
  // has passed its check.
  long long checked = -1;
  if (another_waits(s)) {
    const Result c = database_.monitor().query("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_current_waits'");
    if (c.ok() && !c.empty() && c.rows[0].size() >= 2) checked = std::strtoll(c.rows[0][1].as_text().c_str(), nullptr, 10);
  }
  const Result r = database_.monitor().query("SHOW ENGINE INNODB STATUS");
  if (!r.ok() || r.empty() || r.rows[0].size() < 3) return {};
  const std::string& status = r.rows[0][2].as_text();
  const TrxState t = find_trx(status, db.thread_id());
  if (t.query_id) db.set_query_id(t.query_id);
  if (!t.lock_wait) return {};
  if (checked >= 0 && static_cast<long long>(count_lock_waits(status)) > checked && db.may_wait_for_deadlock_check())
    return {};
  return {nullptr};
}

bool MariadbRun::another_waits(const ServerSession& s) const {
  for (const ServerSession* o : open_sessions())
    if (o != &s && o->waiting()) return true;
  return false;
}

bool MariadbRun::must_queue(const ServerSession& s, const std::vector<const ServerSession*>&) const {
  return another_waits(s);
}

std::unique_ptr<env::TaskDb> MariadbRun::open() { return std::make_unique<MariadbDb>(*this); }

MariadbDb::MariadbDb(MariadbRun& run) : ServerSession(run), run_(run) {
  broken_ = run_.database().acquire(session_);
  run_.opened(this);
}

MariadbDb::~MariadbDb() {
  if (session_) {
    if (in_flight()) abandon();
    has_kept_ = false;
    roll_back_at_close();
    // The rest of what a closed connection loses, before leave_run() lets
    // the tasks waiting for this session's locks go. Should it fail, the
    // next statements on the session answer the error.
    (void)run_.database().forget_session_state(*session_);
  }
  leave_run();
  if (session_) run_.database().release(session_);
}

bool MariadbDb::in_transaction() const {
  if (!session_ || rolled_back_) return false;
  unsigned int status = 0;
  mariadb_get_infov(session_->conn, MARIADB_CONNECTION_SERVER_STATUS, &status);
  return (status & SERVER_STATUS_IN_TRANS) != 0;
}

int MariadbDb::socket() const { return static_cast<int>(mysql_get_socket(session_->conn)); }

Status MariadbDb::prepare_statement(std::string_view sql, const std::vector<Value>& params) {
  query_text_ = mariadb_inline_parameters(sql, params);
  return Status::OK();
}

bool MariadbDb::is_transaction_control(std::string_view sql) const {
  return starts_with_any(sql, {"BEGIN", "START", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "SET", "LOCK", "UNLOCK",
                               "XA"});
}

Status MariadbDb::send() {
  const std::string& text = query_text_;
  rolled_back_ = false;
  unchecked_waits_ = 0;
  phase_ = Phase::kQuery;
  query_error_ = 0;
  query_id_ = 0;
  result_ = nullptr;
  wait_ = mysql_real_query_start(&query_error_, session_->conn, text.data(), text.size());
  if (wait_ == 0) {
    if (query_error_) {
      phase_ = Phase::kAnswered;
      return Status::OK();
    }
    phase_ = Phase::kStore;
    wait_ = mysql_store_result_start(&result_, session_->conn);
    if (wait_ == 0) phase_ = Phase::kAnswered;
  }
  return Status::OK();
}

bool MariadbDb::answer_arrived(int timeout_us) {
  for (;;) {
    if (phase_ == Phase::kAnswered || phase_ == Phase::kIdle) return true;
    pollfd fd{socket(), poll_events(wait_), 0};
    const int n = poll_us(&fd, 1, timeout_us);
    if (n <= 0) return false;
    timeout_us = 0;
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
  while (!answer_arrived(100'000)) {
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
    if (answer_arrived(100'000)) break;
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

Result MariadbDb::exec(std::string_view sql, const std::vector<Value>& params) { return execute(sql, params); }

Result MariadbDb::take_answer(std::string_view) {
  Result r;
  if (has_kept_) {
    r = std::move(kept_);
    has_kept_ = false;
  } else {
    r = take();
  }
  // A deadlock victim and a snapshot conflict (1020) lose the whole
  // transaction; a lock wait timeout only its statement.
  if (r.status.is_deadlock() || r.status.is_serialization()) rolled_back_ = true;
  return r;
}

}  // namespace twice::engine
