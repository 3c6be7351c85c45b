#include "engine/pg_db.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "engine/pg_protocol.h"
#include "env/statement_text.h"

namespace twice::engine {
namespace {

// How long a statement may take before the monitor is asked whether it is
// blocked (the same as ServerRun's). A statement on a Unix socket answers in
// tens of microseconds.
constexpr int kSlowMs = 1;

bool is_word(std::string_view sql, std::string_view word) {
  if (sql.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(sql[i])) != word[i]) return false;
  return sql.size() == word.size() || sql[word.size()] == ' ' || sql[word.size()] == ';';
}

bool is_transaction_control(std::string_view sql) {
  for (std::string_view word : {"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE",
                                "PREPARE", "SET"})
    if (is_word(sql, word)) return true;
  return false;
}

}  // namespace

std::vector<const ServerSession*> PgRun::blockers(const ServerSession& s) {
  const auto& db = static_cast<const PgDb&>(s);
  // Every session of a PgRun is a PgDb (open() makes them).
  std::vector<const PgDb*> open;
  for (const ServerSession* o : open_sessions()) open.push_back(static_cast<const PgDb*>(o));
  std::string others = "{";
  for (const PgDb* o : open) {
    if (o == &db || o->backend_pid() == 0) continue;
    if (others.size() > 1) others += ',';
    others += std::to_string(o->backend_pid());
  }
  others += '}';
  // The isolation tester's question first (it also knows safe-snapshot
  // waits), then whose locks: pg_blocking_pids.
  const Result r = database_.monitor().query(
      "SELECT pg_catalog.pg_isolation_test_session_is_blocked(?1, ?2::int4[]), pg_catalog.pg_blocking_pids(?1)::text",
      {db.backend_pid(), others});
  std::vector<const ServerSession*> out;
  if (!r.ok() || r.empty() || r.rows[0][0].as_int() == 0) return out;
  const std::string pids = r.rows[0][1].as_text();  // "{123,456}"
  for (const PgDb* o : open) {
    if (o == &db || o->backend_pid() == 0) continue;
    const std::string pid = std::to_string(o->backend_pid());
    for (std::size_t at = pids.find(pid); at != std::string::npos; at = pids.find(pid, at + 1)) {
      const char before = pids[at - 1];
      const char after = pids[at + pid.size()];
      if ((before == '{' || before == ',') && (after == '}' || after == ',')) {
        out.push_back(o);
        break;
      }
    }
  }
  // Blocked by a session outside the run (none should hold locks): wait.
  if (out.empty()) out.push_back(nullptr);
  return out;
}

PgDb::PgDb(PgRun& run) : ServerSession(run.scheduler().current()), run_(run), scheduler_(run.scheduler()) {
  broken_ = run_.database().acquire(session_);
  run_.opened(this);
}

PgDb::~PgDb() {
  if (session_) {
    if (in_flight_) abandon();
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
      PQclear(PQexec(session_->conn, "ROLLBACK"));
    }
  }
  run_.closed(this);
  // Its locks are gone: waiters may now proceed.
  run_.settle(nullptr);
  run_.wake_queued();
  if (session_) run_.database().release(session_);
}

bool PgDb::in_transaction() const {
  if (!session_) return false;
  const PGTransactionStatusType t = PQtransactionStatus(session_->conn);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || (t == PQTRANS_ACTIVE && in_flight_);
}

int PgDb::socket() const { return PQsocket(session_->conn); }

bool PgDb::answer_arrived(int timeout_ms) {
  if (answered_) return true;
  PGconn* conn = session_->conn;
  if (!PQconsumeInput(conn)) return answered_ = true;  // broken: PQgetResult reports it
  if (!PQisBusy(conn)) return answered_ = true;
  if (timeout_ms <= 0) return false;
  pollfd fd{PQsocket(conn), POLLIN, 0};
  ::poll(&fd, 1, timeout_ms);
  if (!PQconsumeInput(conn)) return answered_ = true;
  return answered_ = !PQisBusy(conn);
}

void PgDb::abandon() {
  if (!cancel()) {
    PQclear(kept_);
    kept_ = nullptr;
    while (PGresult* r = PQgetResult(session_->conn)) PQclear(r);
    in_flight_ = false;
    answered_ = false;
  }
}

bool PgDb::cancel() {
  if (PGcancel* c = PQgetCancel(session_->conn)) {
    char err[256];
    PQcancel(c, err, sizeof err);
    PQfreeCancel(c);
  }
  // Wait for the answer: an error if the cancel reached the statement, the
  // statement's own result if that came first (then it stays for finish()).
  while (!answer_arrived(100)) {
  }
  PGresult* r = PQgetResult(session_->conn);
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const bool cancelled = state && std::string_view(state) == "57014";
  if (!cancelled) {
    // Put it back: finish() reads it. libpq has no unget, so keep it here.
    kept_ = r;
    return false;
  }
  PQclear(r);
  while (PGresult* more = PQgetResult(session_->conn)) PQclear(more);
  in_flight_ = false;
  answered_ = false;
  return true;
}

Result PgDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return exec(sql, std::vector<Value>(params));
}

Status PgDb::run_now(const char* sql) {
  PGresult* r = PQexec(session_->conn, sql);
  Result out = to_result(session_->conn, r);
  PQclear(r);
  return out.status;
}

Result PgDb::exec(std::string_view sql, const std::vector<Value>& params) {
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
  auto it = translated_.find(sql);
  if (it == translated_.end()) it = translated_.emplace(std::string(sql), to_dollar_placeholders(sql)).first;
  std::vector<std::string> storage;
  const auto values = text_params(params, storage);

  bool told_waiting = false;
  for (;;) {
    // A statement that may have to be cancelled must not take its
    // transaction down with it: a savepoint first, when another one waits.
    // Never around transaction control: RELEASE of an earlier savepoint
    // would release ours too, and these do not wait for row locks.
    const bool savepoint = PQtransactionStatus(session_->conn) == PQTRANS_INTRANS && !is_transaction_control(sql) &&
                           run_.any_waiting();
    // Cancelling is safe with that savepoint, or for an autocommit statement.
    const bool cancellable = savepoint || PQtransactionStatus(session_->conn) == PQTRANS_IDLE;
    if (savepoint) {
      if (Status s = run_now("SAVEPOINT twice_statement"); !s.ok()) return failed(s);
    }
    if (!PQsendQueryParams(session_->conn, it->second.c_str(), static_cast<int>(values.size()), nullptr,
                           values.data(), nullptr, nullptr, 0))
      return failed(Status::error(fmt::format("PostgreSQL connection: {}", PQerrorMessage(session_->conn))));
    in_flight_ = true;
    answered_ = false;
    bool requeue = false;
    for (;;) {
      if (answer_arrived(kSlowMs)) break;
      std::vector<const ServerSession*> blockers = run_.blockers(*this);
      if (blockers.empty()) continue;  // slow, not blocked: keep waiting
      if (tracing && !told_waiting)
        scheduler_.record(sim::TraceKind::kSql, text, "waits for a lock another transaction holds");
      told_waiting = true;
      const bool queue = cancellable && !no_queue_ && run_.must_queue(*this, blockers);
      if (queue && cancel()) {
        if (savepoint &&
            (!run_now("ROLLBACK TO SAVEPOINT twice_statement").ok() || !run_now("RELEASE SAVEPOINT twice_statement").ok()))
          return failed(Status::error("cannot return to the savepoint before a cancelled statement"));
        requeue = true;
        break;
      }
      if (answered_) break;  // answered before the cancel reached it
      waits_for_ = std::move(blockers);
      const bool everyone_waits = scheduler_.block_on_db();
      if (scheduler_.killed()) {
        abandon();
        Result r;
        r.status = Status::crashed();
        return r;
      }
      if (everyone_waits) {
        // Queued statements go again, none queued this time; else the server
        // must break a deadlock among the statements in flight.
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
      return finish(sql, text, savepoint);
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

Result PgDb::finish(std::string_view sql, const std::string& text, bool savepoint) {
  PGresult* last = kept_;
  kept_ = nullptr;
  while (PGresult* r = PQgetResult(session_->conn)) {
    if (last) PQclear(last);
    last = r;
  }
  in_flight_ = false;
  answered_ = false;
  Result r = to_result(session_->conn, last);
  // COMMIT of a transaction an earlier error aborted answers ROLLBACK, not an
  // error: the handler must not take it for a commit.
  if (r.ok() && last && is_word(sql, "COMMIT") && std::string_view(PQcmdStatus(last)) == "ROLLBACK")
    r.status = Status::error("COMMIT rolled back: an earlier statement of the transaction failed");
  PQclear(last);
  // A failed statement leaves its transaction aborted, as without the savepoint.
  if (savepoint && r.ok()) {
    if (Status s = run_now("RELEASE SAVEPOINT twice_statement"); !s.ok())
      r.status = Status::error("releasing the savepoint around the statement: " + s.message());
  }
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kSql, text, env::summarize(sql, r));

  const bool wrote = r.ok() && r.changes > 0 && r.columns.empty();
  if (in_transaction()) {
    if (wrote) uncommitted_.push_back(text);
  } else {
    const bool commit = r.ok() && (is_word(sql, "COMMIT") || is_word(sql, "END"));
    if (wrote || (commit && !uncommitted_.empty())) committed_writes_ = true;
    uncommitted_.clear();
  }
  // Locks may have been released (a transaction ended, a statement failed):
  // let the server settle the other statements in flight before anyone runs.
  run_.settle(this);
  if (!r.ok() || !in_transaction()) run_.wake_queued();
  return r;
}

std::unique_ptr<env::TaskDb> PgRun::open() { return std::make_unique<PgDb>(*this); }

}  // namespace twice::engine
