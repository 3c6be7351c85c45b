#include "engine/pg_database.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/engine_url.h"
#include "engine/pg_protocol.h"

namespace twice::engine {
namespace {

// PostgreSQL's deadlock victim is the waiter whose deadlock_timeout fires
// first once the cycle exists (each waiter checks once). With the timeouts
// spaced by kDeadlockTimeoutStepMs, that is the lowest-indexed session in the
// cycle whenever the cycle closes within that much wall time of its first
// wait: a few scheduling steps, milliseconds even on a loaded machine (20 ms
// proved too little under a parallel ctest with sanitizers). A deadlock costs
// that much wall time, and deadlocks are rare.
constexpr int kDeadlockTimeoutBaseMs = 100;
constexpr int kDeadlockTimeoutStepMs = 100;
// Each TRUNCATE gives every table, index and sequence a new relfilenode: a
// row of pg_class changed per relation per run, and the throwaway server runs
// no autovacuum. The catalog's dead rows are vacuumed this often; a catalog's
// VACUUM changes nothing a run's statements see (user tables are never
// vacuumed: that is what made runs depend on the runs before, see prepare()).
constexpr int kCatalogVacuumEvery = 1000;

std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string quote_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Status PgDatabase::open(const std::string& conninfo, std::unique_ptr<PgDatabase>& out) {
  out.reset();
  std::unique_ptr<PgDatabase> db(new PgDatabase());
  db->conninfo_ = conninfo;
  if (Status s = PgConnection::open(conninfo, db->checker_); !s.ok()) return s;
  if (Status s = PgConnection::open(conninfo, db->monitor_); !s.ok()) return s;
  out = std::move(db);
  return Status::OK();
}

Status PgDatabase::install(const std::string& setup_sql) {
  key_.clear();
  // A fresh public schema: whatever an earlier key created goes with it.
  if (Status s = checker_->exec_script("DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;"); !s.ok())
    return s;
  if (Status s = checker_->exec_script(setup_sql); !s.ok())
    return Status::error("the handler's schema (PostgreSQL setup SQL): " + s.message());
  const Result tables = checker_->query(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  const Result sequences = checker_->query(
      "SELECT sequencename, start_value FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename");
  if (!tables.ok() || !sequences.ok()) return tables.ok() ? sequences.status : tables.status;
  reset_sql_.clear();
  std::string names;
  std::string no_autovacuum;
  for (const auto& row : tables.rows) {
    const std::string t = quote_ident(row[0].as_text());
    reset_sql_ += fmt::format("DELETE FROM {};", t);
    names += (names.empty() ? "" : ", ") + t;
    // Autovacuum's ANALYZE (and VACUUM) sets the statistics the planner
    // reads, at a moment the wall clock picks: off for the run's tables, also
    // on a server an --engine-url names (the throwaway server has it off).
    no_autovacuum += fmt::format("ALTER TABLE {} SET (autovacuum_enabled = off, toast.autovacuum_enabled = off);", t);
  }
  std::string setvals;
  for (const auto& row : sequences.rows)
    setvals += fmt::format("SELECT setval({}, {}, false);", quote_literal("public." + quote_ident(row[0].as_text())),
                           row[1].as_int());
  reset_sql_ += setvals;
  // RESTART IDENTITY resets the sequences the tables own; setval() every
  // other one the schema made.
  truncate_sql_ = names.empty() ? setvals : fmt::format("TRUNCATE {} RESTART IDENTITY;", names) + setvals;
  if (!no_autovacuum.empty())
    if (Status s = checker_->exec_script(no_autovacuum); !s.ok()) return s;
  return Status::OK();
}

Status PgDatabase::prepare(const std::string& key, const std::string& setup_sql, const std::vector<Statement>& seed) {
  if (reset_sent_ && collect_reset_ahead() && key == key_) return vacuum_catalog_now_and_then();
  const bool fresh = key != key_;
  if (fresh) {
    if (Status s = install(setup_sql); !s.ok()) return s;
  } else if (Status s = vacuum_catalog_now_and_then(); !s.ok()) {
    return s;
  }
  std::string script = "BEGIN;";
  if (!fresh) script += reset_method_ == ResetMethod::kDelete ? reset_sql_ : truncate_sql_;
  for (const auto& st : seed) script += inline_parameters(st.sql, st.params) + ";";
  script += "COMMIT;";
  if (Status s = checker_->exec_script(script); !s.ok()) {
    (void)checker_->exec_script("ROLLBACK");
    key_.clear();
    return Status::error("seeding the run's database: " + s.message());
  }
  key_ = key;
  reset_script_ = "BEGIN;";
  reset_script_ += reset_method_ == ResetMethod::kDelete ? reset_sql_ : truncate_sql_;
  for (const auto& st : seed) reset_script_ += inline_parameters(st.sql, st.params) + ";";
  reset_script_ += "COMMIT;";
  return Status::OK();
}

Status PgDatabase::vacuum_catalog_now_and_then() {
  if (reset_method_ != ResetMethod::kTruncate || ++resets_ % kCatalogVacuumEvery != 0) return Status::OK();
  return checker_->exec_script("VACUUM pg_catalog.pg_class");
}

void PgDatabase::reset_ahead() {
  if (reset_sent_ || key_.empty()) return;
  reset_sent_ = PQsendQuery(checker_->handle(), reset_script_.c_str()) == 1;
  if (!reset_sent_) key_.clear();
}

bool PgDatabase::collect_reset_ahead() {
  if (!reset_sent_) return true;
  reset_sent_ = false;
  bool ok = true;
  while (PGresult* r = PQgetResult(checker_->handle())) {
    const ExecStatusType t = PQresultStatus(r);
    if (t != PGRES_COMMAND_OK && t != PGRES_TUPLES_OK) ok = false;
    PQclear(r);
  }
  if (!ok) {
    (void)checker_->exec_script("ROLLBACK");
    key_.clear();
  }
  return ok;
}

Status PgDatabase::set_isolation(Isolation isolation) {
  if (isolation == isolation_) return Status::OK();
  isolation_ = isolation;
  // The level is one of a session's options: new sessions, opened as needed.
  sessions_.close_all();
  return Status::OK();
}

std::string PgDatabase::session_options(int index) const {
  // A value's spaces are escaped in libpq's options; these are the values
  // RESET goes back to, since the server got them at connection start.
  std::string isolation(isolation_sql(isolation_));
  for (std::size_t at = isolation.find(' '); at != std::string::npos; at = isolation.find(' ', at + 2))
    isolation.replace(at, 1, "\\ ");
  return fmt::format("-c default_transaction_isolation={} -c deadlock_timeout={}ms -c lock_timeout=0", isolation,
                     kDeadlockTimeoutBaseMs + kDeadlockTimeoutStepMs * index);
}

Status PgDatabase::forget_session_state(PgSession& session) {
  // DISCARD ALL: temporary tables, session settings (back to the ones the
  // session started with, its options), advisory locks, prepared
  // statements, cursors, LISTENs. One statement, about as cheap as SELECT 1.
  PGresult* r = PQexec(session.conn, "DISCARD ALL");
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  if (ok) return Status::OK();
  // Then as a closed connection, for real: a new backend with the same options.
  PQreset(session.conn);
  if (PQstatus(session.conn) == CONNECTION_OK) {
    session.backend_pid = PQbackendPID(session.conn);
    quiet_notices(session.conn);
    return Status::OK();
  }
  return Status::error(fmt::format("cannot reset a PostgreSQL session: {}", PQerrorMessage(session.conn)));
}

Status PgDatabase::acquire(PgSession*& out) {
  return sessions_.acquire(out, [this](int index, std::unique_ptr<PgSession>& session) {
    // The session's settings go in its options, ahead of any the conninfo
    // gives (a later -c wins), so that DISCARD ALL keeps them.
    std::string options = session_options(index);
    if (PQconninfoOption* given = PQconninfoParse(conninfo_.c_str(), nullptr)) {
      for (PQconninfoOption* o = given; o->keyword; ++o)
        if (std::string_view(o->keyword) == "options" && o->val && *o->val) options = std::string(o->val) + " " + options;
      PQconninfoFree(given);
    }
    const char* keywords[] = {"dbname", "options", nullptr};
    const char* values[] = {conninfo_.c_str(), options.c_str(), nullptr};
    PGconn* conn = PQconnectdbParams(keywords, values, 1);
    if (PQstatus(conn) != CONNECTION_OK) {
      Status s = Status::error(
          fmt::format("cannot connect to PostgreSQL: {}", without_url_passwords(PQerrorMessage(conn), conninfo_)));
      PQfinish(conn);
      return s;
    }
    quiet_notices(conn);
    session = std::make_unique<PgSession>();
    session->conn = conn;
    session->backend_pid = PQbackendPID(conn);
    return Status::OK();
  });
}

}  // namespace twice::engine
