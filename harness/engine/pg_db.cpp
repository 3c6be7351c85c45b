#include "engine/pg_db.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "engine/pg_protocol.h"
#include "engine/sql_words.h"
#include "engine/statement_patience.h"

namespace twice::engine {

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

PgDb::PgDb(PgRun& run) : ServerSession(run), run_(run) {
  broken_ = run_.database().acquire(session_);
  run_.opened(this);
}

PgDb::~PgDb() {
  if (session_) {
    if (in_flight_) abandon();
    roll_back_at_close();
    // The rest of what a closed connection loses; before leave_run(), which
    // lets the tasks waiting for this session's locks (advisory ones too) go.
    // Should even a new connection fail, the next statements on the session
    // answer that error, as on any broken connection.
    (void)run_.database().forget_session_state(*session_);
  }
  clear_results();
  leave_run();
  if (session_) run_.database().release(session_);
}

bool PgDb::in_transaction() const {
  if (!session_) return false;
  const PGTransactionStatusType t = PQtransactionStatus(session_->conn);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || (t == PQTRANS_ACTIVE && in_flight_);
}

int PgDb::socket() const { return PQsocket(session_->conn); }

// The answer is whole at ReadyForQuery, not at its result: PostgreSQL sends
// an ERROR (a deadlock victim's 40P01) at once and only then aborts the
// transaction and releases its locks, before ReadyForQuery. Taken at the
// error, the victim's answer let twice ask who blocks the survivor while the
// victim still held its locks: the survivor was seen blocked or not,
// depending on that race (PgDeadlock flaked once under load). The results
// read on the way are kept for take_answer().
bool PgDb::whole_answer_read() {
  PGconn* conn = session_->conn;
  while (!PQisBusy(conn)) {
    PGresult* r = PQgetResult(conn);
    if (!r) return true;  // ReadyForQuery
    results_.push_back(r);
  }
  return false;
}

void PgDb::clear_results() {
  for (PGresult* r : results_) PQclear(r);
  results_.clear();
}

bool PgDb::answer_arrived(int timeout_us) {
  if (answered_) return true;
  PGconn* conn = session_->conn;
  if (!PQconsumeInput(conn)) return answered_ = true;  // broken: PQgetResult reports it
  if (whole_answer_read()) return answered_ = true;
  if (timeout_us <= 0) return false;
  pollfd fd{PQsocket(conn), POLLIN, 0};
  poll_us(&fd, 1, timeout_us);
  if (!PQconsumeInput(conn)) return answered_ = true;
  return answered_ = whole_answer_read();
}

void PgDb::abandon() {
  if (!cancel()) {
    clear_results();
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
  while (!answer_arrived(100'000)) {
  }
  const PGresult* r = results_.empty() ? nullptr : results_.front();
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const bool cancelled = state && std::string_view(state) == "57014";
  if (!cancelled) return false;  // the statement's own answer: take_answer() reads it
  clear_results();
  while (PGresult* more = PQgetResult(session_->conn)) PQclear(more);
  in_flight_ = false;
  answered_ = false;
  return true;
}

Result PgDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  return exec(sql, std::vector<Value>(params));
}

Result PgDb::exec(std::string_view sql, const std::vector<Value>& params) { return execute(sql, params); }

Status PgDb::run_now(const std::string& sql) {
  PGresult* r = PQexec(session_->conn, sql.c_str());
  Result out = to_result(session_->conn, r);
  PQclear(r);
  return out.status;
}

Status PgDb::prepare_statement(std::string_view sql, const std::vector<Value>& params) {
  auto it = translated_.find(sql);
  if (it == translated_.end()) it = translated_.emplace(std::string(sql), to_dollar_placeholders(sql)).first;
  statement_ = &it->second;
  storage_.clear();
  values_ = text_params(params, storage_);
  return Status::OK();
}

Status PgDb::send() {
  if (!PQsendQueryParams(session_->conn, statement_->c_str(), static_cast<int>(values_.size()), nullptr,
                         values_.data(), nullptr, nullptr, 0))
    return Status::error(fmt::format("PostgreSQL connection: {}", PQerrorMessage(session_->conn)));
  in_flight_ = true;
  answered_ = false;
  return Status::OK();
}

bool PgDb::can_take_savepoint() const { return PQtransactionStatus(session_->conn) == PQTRANS_INTRANS; }

bool PgDb::outside_transaction() const { return PQtransactionStatus(session_->conn) == PQTRANS_IDLE; }

bool PgDb::is_transaction_control(std::string_view sql) const {
  return starts_with_any(sql, {"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE",
                               "PREPARE", "SET"});
}

Result PgDb::take_answer(std::string_view sql) {
  PGresult* last = nullptr;
  for (PGresult* r : results_) {
    if (last) PQclear(last);
    last = r;
  }
  results_.clear();
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
  return r;
}

std::unique_ptr<env::TaskDb> PgRun::open() { return std::make_unique<PgDb>(*this); }

}  // namespace twice::engine
