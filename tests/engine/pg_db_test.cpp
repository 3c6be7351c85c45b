// PgDb and its pieces against the real server: placeholders, SQLSTATE ->
// Status, per-run reset, blocked statements parking their task, and a run on
// PostgreSQL replaying byte for byte.
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

TEST(PgDatabase, ServerAnswersMapOntoStatusAndValues) {
  std::unique_ptr<engine::PgDatabase> db;
  ASSERT_TRUE(postgres().lease(db).ok());
  auto& c = db->checker();
  ASSERT_TRUE(c.exec_script("DROP TABLE IF EXISTS kv; CREATE TABLE kv (k TEXT PRIMARY KEY, n BIGINT, r DOUBLE PRECISION)").ok());
  EXPECT_TRUE(c.query("INSERT INTO kv VALUES (?, ?, ?)", {"a", 7, 1.5}).ok());
  EXPECT_TRUE(c.query("INSERT INTO kv VALUES (?, ?, ?)", {"a", 8, 2.5}).status.is_constraint());
  const Result r = c.query("SELECT k, n, r, SUM(n) AS total, NULL AS nothing FROM kv GROUP BY k, n, r");
  ASSERT_TRUE(r.ok()) << r.status.to_string();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.at(0, "k"), Value("a"));
  EXPECT_EQ(r.at(0, "n"), Value(7));
  EXPECT_EQ(r.at(0, "r"), Value(1.5));
  EXPECT_EQ(r.at(0, "total"), Value(7));  // numeric, whole: an integer as on SQLite
  EXPECT_TRUE(r.at(0, "nothing").is_null());
  // changes counts matched rows, also when the value does not change.
  EXPECT_EQ(c.query("UPDATE kv SET n = n WHERE k = ?", {"a"}).changes, 1);
  EXPECT_TRUE(c.exec_script("DROP TABLE kv").ok());
  postgres().give_back(std::move(db));
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

TEST(PgRun, SequentialPaymentPassesAndTheDatabaseIsResetBetweenRuns) {
  const gateway::Scenario s = one_order_scenario();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const run::RunResult r = run_on(s, "unique-key+cas", seed, on_postgres(Isolation::kReadCommitted));
    EXPECT_TRUE(r.verdict.violations.empty()) << trace_text(r);
    // One credit each run: the previous run's rows are gone.
    ASSERT_EQ(r.verdict.accounts.size(), 1u);
    EXPECT_EQ(r.verdict.accounts[0].balance, 100) << "seed " << seed;
  }
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
    seen = any_line(r, "waits for a lock another transaction holds");
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

// The @Transactional bug, forced: both read WAIT_PAY; T2 updates first; T1's
// UPDATE waits for T2's row lock, and once T2 commits it resumes and updates
// the row anyway (READ COMMITTED re-reads the new version and the WHERE still
// matches): a second credit. Under SERIALIZABLE the resumed UPDATE fails.
TEST(PgRegression, TheBlockedUpdateResumesAfterTheOtherCommitAndCreditsAgain) {
  const gateway::Scenario s = concurrent_copies_scenario(1);
  const std::vector<int> script = {1, 1, 1, 2, 2, 2, 2, 1};
  const run::RunResult r = script_on(s, "check-in-txn", script, Isolation::kReadCommitted);
  EXPECT_EQ(invariants_of(r), std::vector<std::string>{"double_credit"}) << trace_text(r);
  const auto t1 = steps_of(r, 1);
  const auto waits = std::find_if(t1.begin(), t1.end(), [](const std::string& l) {
    return l.starts_with("sql UPDATE orders") && l.ends_with("-> waits for a lock another transaction holds");
  });
  ASSERT_NE(waits, t1.end()) << trace_text(r);
  ASSERT_NE(waits + 1, t1.end());
  EXPECT_TRUE(waits[1].starts_with("sql UPDATE orders") && waits[1].ends_with("-> 1 row changed")) << waits[1];
  // In the whole trace: T2's COMMIT comes between T1's wait and its resumption.
  const std::string all = trace_text(r);
  const auto wait_at = all.find("waits for a lock");
  const auto commit_at = all.find("T2   sql   COMMIT -> ok");
  const auto resumed_at = all.find("T1   sql   UPDATE orders", wait_at + 1);
  EXPECT_LT(wait_at, commit_at);
  EXPECT_LT(commit_at, resumed_at);

  const run::RunResult safe = script_on(s, "check-in-txn", script, Isolation::kSerializable);
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

// Three copies queue behind one row lock: when it is released, the server
// would wake both waiters at once and pick a winner at random. The second
// waiter is cancelled and queued instead, so the seed decides.
TEST(PgRun, TheSameSeedGivesTheSameTraceByteForByte) {
  const gateway::Scenario s = concurrent_copies_scenario(3);
  int queued_runs = 0;
  for (const char* handler_name : {"check-in-txn", "rmw-in-txn", "unique-key+cas", "select-for-update"}) {
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
      for (auto isolation : {Isolation::kReadCommitted, Isolation::kSerializable}) {
        const run::RunResult first = run_on(s, handler_name, seed, on_postgres(isolation));
        const run::RunResult second = run_on(s, handler_name, seed, on_postgres(isolation));
        EXPECT_EQ(trace_text(first), trace_text(second)) << handler_name << " seed " << seed;
        int waits = 0;
        for (const auto& e : first.trace.events()) {
          waits += e.result == "waits for a lock another transaction holds";
          // twice's own savepoints never break the handler's transaction
          // (25P02 after a handler ignored its own error is the handler's).
          EXPECT_EQ(e.result.find("SQLSTATE 3B001"), std::string::npos) << handler_name << " seed " << seed;
          EXPECT_EQ(e.result.find("releasing the savepoint"), std::string::npos) << handler_name << " seed " << seed;
        }
        queued_runs += waits >= 2;
      }
    }
  }
  EXPECT_GT(queued_runs, 0);  // the case that needs the queue did occur
}

}  // namespace twice::testing

namespace twice::testing {

// The checker's oracle queries go in one round trip on PostgreSQL; each must
// answer what it answers alone, also after one of them fails.
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
