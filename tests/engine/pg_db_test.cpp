// PgDb and its pieces against the real server, where PostgreSQL differs from
// MariaDB: placeholders, SQLSTATE -> Status, the serialization failure,
// blocked statements parking their task, the queueing savepoint, the oracle
// queries in one round trip. What both server engines must do is
// server_engine_test.cpp.
#include <cctype>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/pg_connection.h"
#include "engine/pg_protocol.h"
#include "engine_environment.h"
#include "support.h"

namespace twice::testing {
namespace {

using engine::Isolation;

bool any_line(const run::RunResult& r, const std::string& needle) {
  for (const auto& e : r.trace.events())
    if ((e.text + " " + e.result).find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(PgProtocol, QuestionMarksBecomeDollarParametersOutsideLiterals) {
  EXPECT_EQ(engine::to_dollar_placeholders("SELECT a FROM t WHERE b = ? AND c = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2");
  EXPECT_EQ(engine::to_dollar_placeholders("INSERT INTO t VALUES (?1, ?2, ?1)"), "INSERT INTO t VALUES ($1, $2, $1)");
  EXPECT_EQ(engine::to_dollar_placeholders("SELECT '?' , \"a?\" , ? -- why?\n, ?"), "SELECT '?' , \"a?\" , $1 -- why?\n, $2");
}

TEST(PgProtocol, SqlstatesBecomeDistinctStatusKinds) {
  EXPECT_TRUE(engine::status_from_sqlstate("23505", "dup").is_constraint());
  EXPECT_TRUE(engine::status_from_sqlstate("23514", "check").is_constraint());
  EXPECT_TRUE(engine::status_from_sqlstate("40001", "ser").is_serialization());
  EXPECT_TRUE(engine::status_from_sqlstate("40P01", "dl").is_deadlock());
  EXPECT_TRUE(engine::status_from_sqlstate("55P03", "lt").is_lock_timeout());
  const Status other = engine::status_from_sqlstate("42P01", "relation \"nope\" does not exist");
  EXPECT_EQ(other.code(), Status::Code::kError);
  EXPECT_EQ(other.message(), "relation \"nope\" does not exist (SQLSTATE 42P01)");
  EXPECT_TRUE(Status::serialization("x").is_retryable());
  EXPECT_FALSE(Status::constraint("x").is_retryable());
}

TEST(PgDatabase, ASerializationFailureIsItsOwnKind) {
  std::unique_ptr<engine::PgDatabase> db;
  ASSERT_TRUE(postgres().lease(db).ok());
  std::unique_ptr<engine::PgConnection> other;
  ASSERT_TRUE(engine::PgConnection::open(db->conninfo(), other).ok());
  auto& a = db->checker();
  ASSERT_TRUE(a.exec_script("DROP TABLE IF EXISTS acct; CREATE TABLE acct (id INT PRIMARY KEY, v INT); "
                            "INSERT INTO acct VALUES (1, 0)").ok());
  ASSERT_TRUE(a.exec_script("BEGIN ISOLATION LEVEL REPEATABLE READ").ok());
  ASSERT_TRUE(a.query("SELECT v FROM acct WHERE id = 1").ok());
  ASSERT_TRUE(other->query("UPDATE acct SET v = 5 WHERE id = 1").ok());
  const Result r = a.query("UPDATE acct SET v = v + 1 WHERE id = 1");
  EXPECT_TRUE(r.status.is_serialization()) << r.status.to_string();
  ASSERT_TRUE(a.exec_script("ROLLBACK; DROP TABLE acct").ok());
  postgres().give_back(std::move(db));
}

TEST(PgRun, CheckThenActDoubleCreditsOnPostgresToo) {
  const gateway::Scenario s = concurrent_copies_scenario(2);
  bool found = false;
  for (std::uint64_t seed = 1; seed <= 40 && !found; ++seed)
    found = run_on(s, "check-then-act", seed, on_postgres(Isolation::kReadCommitted)).has("double_credit");
  EXPECT_TRUE(found);
}

TEST(PgRun, ABlockedUpdateParksItsTaskAndResumesAfterTheOtherCommits) {
  // check-in-txn, two copies interleaved statement by statement: the second
  // UPDATE waits for the first transaction's row lock.
  const gateway::Scenario s = concurrent_copies_scenario(2);
  bool seen = false;
  for (std::uint64_t seed = 1; seed <= 60 && !seen; ++seed) {
    const run::RunResult r = run_on(s, "check-in-txn", seed, on_postgres(Isolation::kReadCommitted));
    seen = any_line(r, "waits for a lock ");
    if (seen) {
      EXPECT_TRUE(r.has("double_credit")) << trace_text(r);
    }
  }
  EXPECT_TRUE(seen);
}

run::RunResult script_on(const gateway::Scenario& s, const std::string& handler_name, std::vector<int> script,
                         Isolation isolation) {
  run::RunSpec spec{&s, &handler(handler_name), {}, 0, std::nullopt};
  spec.strategy.kind = sim::StrategyKind::kScripted;
  spec.strategy.script = std::move(script);
  spec.engine = on_postgres(isolation);
  return run::simulate(spec).value();
}

// The @Transactional script of ServerRegression (server_engine_test.cpp), at
// SERIALIZABLE: T1's UPDATE, resumed after T2's COMMIT, fails (40001)
// instead of crediting again.
TEST(PgRegression, AtSerializableTheResumedUpdateFailsInsteadOfCreditingAgain) {
  const gateway::Scenario s = concurrent_copies_scenario(1);
  const run::RunResult safe = script_on(s, "check-in-txn", {1, 1, 1, 2, 2, 2, 2, 1}, Isolation::kSerializable);
  EXPECT_TRUE(safe.verdict.violations.empty()) << trace_text(safe);
  EXPECT_NE(trace_text(safe).find("SERIALIZATION FAILURE"), std::string::npos) << trace_text(safe);
}

// A handler's RELEASE SAVEPOINT inside twice's savepoint around a statement
// released twice's too; the RELEASE of twice's then failed and aborted the
// handler's transaction ("current transaction is aborted"): the credit was
// lost. Transaction control is never wrapped now.
TEST(PgRegression, AHandlersOwnSavepointsSurviveTheQueueingSavepoint) {
  const gateway::Scenario s = bundled_scenario("concurrent-duplicates");
  const run::RunResult r = run_on(s, "ack-before-commit", 6650854377519919u, on_postgres(Isolation::kReadCommitted));
  EXPECT_FALSE(r.has("lost_payment")) << trace_text(r);
  EXPECT_EQ(trace_text(r).find("SQLSTATE"), std::string::npos) << trace_text(r);
}

}  // namespace twice::testing

namespace twice::testing {

// The checker's oracle queries go in one round trip on PostgreSQL; each must
// answer what it answers alone, also after one of them fails.
// A reset leaves every sequence as the schema made it: one the schema created
// on its own (not owned by a column, so not restarted by TRUNCATE ... RESTART
// IDENTITY) starting at 1000 gives 1000 again after each reset, by either
// method, as on a fresh database (setval(1) failed: 1 is below its minimum).
TEST(PgDatabase, AResetRestartsEverySequenceAtItsOwnStart) {
  const std::string setup =
      "CREATE SEQUENCE voucher_no START 1000 MINVALUE 1000;"
      "CREATE TABLE vouchers (id BIGSERIAL PRIMARY KEY, no BIGINT NOT NULL DEFAULT nextval('voucher_no'));";
  for (const engine::ResetMethod method : {engine::ResetMethod::kTruncate, engine::ResetMethod::kDelete}) {
    std::unique_ptr<engine::PgDatabase> db;
    ASSERT_TRUE(postgres().lease(db).ok());
    db->set_reset_method(method);
    for (int run = 0; run < 3; ++run) {
      const Status s = db->prepare(fmt::format("sequence-start {}", static_cast<int>(method)), setup, {});
      ASSERT_TRUE(s.ok()) << "run " << run << ": " << s.to_string();
      const Result r = db->checker().query("INSERT INTO vouchers DEFAULT VALUES RETURNING id, no");
      ASSERT_TRUE(r.ok()) << r.status.to_string();
      ASSERT_EQ(r.rows.size(), 1u);
      EXPECT_EQ(r.rows[0][0].as_int(), 1) << "run " << run;
      EXPECT_EQ(r.rows[0][1].as_int(), 1000) << "run " << run;
    }
    postgres().give_back(std::move(db));
  }
}

// A task session's settings survive the reset a delivery's end makes
// (DISCARD ALL goes back to the options the session started with), and a
// new isolation level reaches every session.
TEST(PgDatabase, SessionSettingsSurviveTheResetAndFollowTheLevel) {
  std::unique_ptr<engine::PgDatabase> db;
  ASSERT_TRUE(postgres().lease(db).ok());
  const auto show = [](engine::PgSession* s, const char* what) {
    PGresult* r = PQexec(s->conn, fmt::format("SHOW {}", what).c_str());
    std::string v = PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : PQresultErrorMessage(r);
    PQclear(r);
    return v;
  };
  for (const Isolation level : {Isolation::kSerializable, Isolation::kReadCommitted, Isolation::kRepeatableRead}) {
    ASSERT_TRUE(db->set_isolation(level).ok());
    engine::PgSession* a = nullptr;
    engine::PgSession* b = nullptr;
    ASSERT_TRUE(db->acquire(a).ok());
    ASSERT_TRUE(db->acquire(b).ok());
    std::string expected(engine::isolation_sql(level));
    for (char& c : expected) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int round = 0; round < 2; ++round) {
      for (engine::PgSession* s : {a, b}) {
        EXPECT_EQ(show(s, "default_transaction_isolation"), expected) << "round " << round;
        EXPECT_EQ(show(s, "lock_timeout"), "0") << "round " << round;
        PGresult* r = PQexec(s->conn, "SET default_transaction_isolation = 'read uncommitted'; SET lock_timeout = '5s'");
        PQclear(r);
        ASSERT_TRUE(db->forget_session_state(*s).ok());
      }
    }
    EXPECT_NE(show(a, "deadlock_timeout"), show(b, "deadlock_timeout")) << "a timeout of its own per session";
    db->release(a);
    db->release(b);
  }
  postgres().give_back(std::move(db));
}

TEST(PgConnection, QueryEachAnswersEachQueryAsItWouldAlone) {
  std::unique_ptr<engine::PgDatabase> db;
  ASSERT_TRUE(postgres().lease(db).ok());
  auto& c = db->checker();
  ASSERT_TRUE(c.exec_script("DROP TABLE IF EXISTS qe; CREATE TABLE qe (k TEXT PRIMARY KEY, n BIGINT);"
                            "INSERT INTO qe VALUES ('a', 1), ('b', 2)")
                  .ok());
  const std::vector<std::string> sqls = {"SELECT k, n FROM qe ORDER BY k", "SELECT COUNT(*) FROM qe",
                                         "SELECT nope FROM qe", "SELECT SUM(n) AS total FROM qe",
                                         "SELECT k FROM qe WHERE n > 1"};
  const std::vector<Result> together = c.query_each(sqls);
  ASSERT_EQ(together.size(), sqls.size());
  for (std::size_t i = 0; i < sqls.size(); ++i) {
    const Result alone = c.query(sqls[i]);
    EXPECT_EQ(together[i].status.to_string(), alone.status.to_string()) << sqls[i];
    EXPECT_EQ(together[i].columns, alone.columns) << sqls[i];
    EXPECT_EQ(together[i].rows, alone.rows) << sqls[i];
  }
  EXPECT_FALSE(together[2].ok());
  EXPECT_EQ(together[3].rows.at(0).at(0), Value(3));  // after the failure, still answered
  EXPECT_TRUE(c.exec_script("DROP TABLE qe").ok());
  postgres().give_back(std::move(db));
}

}  // namespace twice::testing

namespace twice::testing {
namespace {

// A server named by --engine-url whose user may not do what every run needs
// is refused once, before any cell, naming the right and the fix. (Without
// the check, every statement of every run failed, which read as a handler
// losing payments.)
TEST(PgCluster, AnEngineUrlUserWithoutTheRightsRunsNeedIsRefusedUpFront) {
  std::unique_ptr<engine::PgConnection> admin;
  ASSERT_TRUE(engine::PgConnection::open(postgres().server()->conninfo("postgres"), admin).ok());
  ASSERT_TRUE(admin
                  ->exec_script("DROP ROLE IF EXISTS twice_test_nocreate; DROP ROLE IF EXISTS twice_test_creator; "
                                "CREATE ROLE twice_test_nocreate LOGIN; CREATE ROLE twice_test_creator LOGIN CREATEDB")
                  .ok());
  const auto url = [&](const std::string& user) { return postgres().server()->conninfo("postgres") + " user=" + user; };
  const auto refusal = [&](const std::string& user) {
    engine::PgCluster cluster(url(user));
    return cluster.ensure_started().message();
  };
  // Naming the server (a URL without a password, as given).
  EXPECT_EQ(refusal("twice_test_nocreate"),
            "--engine-url '" + url("twice_test_nocreate") +
                "': user 'twice_test_nocreate' may not create databases, and twice creates one per worker: ALTER ROLE "
                "twice_test_nocreate CREATEDB, or connect as a user who may");
  EXPECT_EQ(refusal("twice_test_creator"),
            "--engine-url '" + url("twice_test_creator") +
                "': user 'twice_test_creator' may not set deadlock_timeout, which twice sets on each of its "
                "connections: connect as a superuser, or GRANT SET ON PARAMETER deadlock_timeout TO twice_test_creator "
                "(PostgreSQL 15 and later)");
  ASSERT_TRUE(admin->exec_script("GRANT SET ON PARAMETER deadlock_timeout TO twice_test_creator").ok());
  EXPECT_EQ(refusal("twice_test_creator"), "");
  EXPECT_EQ(refusal("postgres"), "");
  ASSERT_TRUE(admin->exec_script("DROP OWNED BY twice_test_creator; DROP ROLE twice_test_nocreate; "
                                 "DROP ROLE twice_test_creator")
                  .ok());
}

}  // namespace
}  // namespace twice::testing
