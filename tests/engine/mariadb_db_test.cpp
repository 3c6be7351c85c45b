// MariadbDb and its pieces against a real MariaDB server: placeholders,
// error numbers -> Status, rows matched, the per-run reset, the acceptance
// targets of issue 10 on InnoDB (the @Transactional double credit and the
// lost update at REPEATABLE READ, the blocked UPDATE resuming after the other
// COMMIT), and the same seed giving the same trace byte for byte.
#include <gtest/gtest.h>

#include <mysqld_error.h>

#include <cstdio>
#include <set>

#include "engine/mariadb_connection.h"
#include "engine/mariadb_protocol.h"
#include "engine_environment.h"
#include "gateway/scenario.h"
#include "support.h"

namespace twice::testing {
namespace {

using engine::Isolation;

constexpr int kSeeds = 30;
const std::set<std::string> kNone;

}  // namespace

TEST(MariadbProtocol, PlaceholdersBecomeLiteralsOutsideQuotesAndComments) {
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT a FROM t WHERE b = ? AND c = ?", {"x", 7}),
            "SELECT a FROM t WHERE b = 'x' AND c = 7");
  EXPECT_EQ(engine::mariadb_inline_parameters("INSERT INTO t VALUES (?1, ?2, ?1)", {1.5, nullptr}),
            "INSERT INTO t VALUES (1.5, NULL, 1.5)");
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT '?', `a?`, ? -- why?\n, ? # no?\n", {1, 2}),
            "SELECT '?', `a?`, 1 -- why?\n, 2 # no?\n");
  // Quotes and backslashes cannot end the literal early.
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT ?", {"it's \\ done"}), "SELECT 'it''s \\\\ done'");
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT 'a\\'?' , ?", {3}), "SELECT 'a\\'?' , 3");
}

TEST(MariadbProtocol, ErrorNumbersBecomeTheSameStatusKindsAsPostgresql) {
  EXPECT_TRUE(engine::mariadb_status(ER_LOCK_DEADLOCK, "dl").is_deadlock());
  EXPECT_TRUE(engine::mariadb_status(ER_LOCK_WAIT_TIMEOUT, "lt").is_lock_timeout());
  EXPECT_TRUE(engine::mariadb_status(ER_DUP_ENTRY, "dup").is_constraint());
  EXPECT_TRUE(engine::mariadb_status(ER_CONSTRAINT_FAILED, "check").is_constraint());
  EXPECT_TRUE(engine::mariadb_status(ER_BAD_NULL_ERROR, "null").is_constraint());
  EXPECT_EQ(engine::mariadb_status(ER_NO_SUCH_TABLE, "no table").code(), Status::Code::kError);
}

TEST(MariadbProtocol, UrlsNameASocketOrAHost) {
  engine::MariadbAddress a;
  std::string error;
  ASSERT_TRUE(engine::parse_mariadb_url("mysql://app:secret@db.internal:3307/pay", a, error)) << error;
  EXPECT_EQ(a.user, "app");
  EXPECT_EQ(a.password, "secret");
  EXPECT_EQ(a.host, "db.internal");
  EXPECT_EQ(a.port, 3307u);
  EXPECT_EQ(a.database, "pay");
  ASSERT_TRUE(engine::parse_mariadb_url("mysql://root@/?socket=/run/mysqld/mysqld.sock", a, error)) << error;
  EXPECT_EQ(a.socket, "/run/mysqld/mysqld.sock");
  EXPECT_FALSE(engine::parse_mariadb_url("postgres://x@y/z", a, error));
  EXPECT_FALSE(engine::parse_mariadb_url("mysql://root@host:99999/x", a, error));
  EXPECT_EQ(error, "--engine-url 'mysql://root@host:99999/x': '99999' is not a port");
}

TEST(MariadbDatabase, ServerAnswersMapOntoStatusAndValues) {
  std::unique_ptr<engine::MariadbDatabase> db;
  ASSERT_TRUE(mariadb().lease(db).ok());
  auto& c = db->checker();
  ASSERT_TRUE(c.exec_script("DROP TABLE IF EXISTS kv; CREATE TABLE kv (k VARCHAR(8) PRIMARY KEY, n BIGINT, r DOUBLE)")
                  .ok());
  EXPECT_TRUE(c.query("INSERT INTO kv VALUES (?, ?, ?)", {"a", 7, 1.5}).ok());
  EXPECT_TRUE(c.query("INSERT INTO kv VALUES (?, ?, ?)", {"a", 8, 2.5}).status.is_constraint());
  const Result r = c.query("SELECT k, n, r, SUM(n) AS total, NULL AS nothing FROM kv GROUP BY k, n, r");
  ASSERT_TRUE(r.ok()) << r.status.to_string();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.at(0, "k"), Value("a"));
  EXPECT_EQ(r.at(0, "n"), Value(7));
  EXPECT_EQ(r.at(0, "r"), Value(1.5));
  EXPECT_EQ(r.at(0, "total"), Value(7));  // DECIMAL, whole: an integer as on SQLite
  EXPECT_TRUE(r.at(0, "nothing").is_null());
  // changes counts matched rows (CLIENT_FOUND_ROWS), also when the value does not change.
  EXPECT_EQ(c.query("UPDATE kv SET n = n WHERE k = ?", {"a"}).changes, 1);
  // Text compares byte for byte (utf8mb4_bin), as on the other engines.
  EXPECT_TRUE(c.query("SELECT k FROM kv WHERE k = 'A'").empty());
  EXPECT_TRUE(c.exec_script("DROP TABLE kv").ok());
  mariadb().give_back(std::move(db));
}

TEST(MariadbDatabase, ADeadlockVictimGetsTheDeadlockKind) {
  std::unique_ptr<engine::MariadbDatabase> db;
  ASSERT_TRUE(mariadb().lease(db).ok());
  auto& a = db->checker();
  ASSERT_TRUE(a.exec_script("DROP TABLE IF EXISTS acct; CREATE TABLE acct (id INT PRIMARY KEY, v INT); "
                            "INSERT INTO acct VALUES (1, 0), (2, 0)")
                  .ok());
  engine::MariadbSession* other = nullptr;
  ASSERT_TRUE(db->acquire(other).ok());
  ASSERT_TRUE(a.exec_script("START TRANSACTION; UPDATE acct SET v = 1 WHERE id = 1").ok());
  ASSERT_EQ(mysql_query(other->conn, "START TRANSACTION"), 0);
  ASSERT_EQ(mysql_query(other->conn, "UPDATE acct SET v = 2 WHERE id = 2"), 0);
  // `other` waits for row 1 (sent without waiting), then `a` closes the cycle.
  int err = 0;
  int wait = mysql_real_query_start(&err, other->conn, "UPDATE acct SET v = 2 WHERE id = 1", 34);
  const Result r = a.query("UPDATE acct SET v = 1 WHERE id = 2");
  while (wait) wait = mysql_real_query_cont(&err, other->conn, MYSQL_WAIT_READ);
  const Status theirs = err ? engine::mariadb_status(other->conn) : Status::OK();
  // InnoDB picks one victim; whichever it is, it gets kDeadlock.
  EXPECT_NE(r.status.is_deadlock(), theirs.is_deadlock()) << r.status.to_string() << " / " << theirs.to_string();
  (void)mysql_query(other->conn, "ROLLBACK");
  db->release(other);
  ASSERT_TRUE(a.exec_script("ROLLBACK; DROP TABLE acct").ok());
  mariadb().give_back(std::move(db));
}

TEST(MariadbRun, SequentialPaymentPassesAndTheDatabaseIsResetBetweenRuns) {
  const gateway::Scenario s = one_order_scenario();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const run::RunResult r = run_on(s, "unique-key+cas", seed, on_mariadb(Isolation::kRepeatableRead));
    EXPECT_TRUE(r.verdict.violations.empty()) << trace_text(r);
    ASSERT_EQ(r.verdict.accounts.size(), 1u);
    EXPECT_EQ(r.verdict.accounts[0].balance, 100) << "seed " << seed;
  }
}

TEST(MariadbRun, CheckInTxnDoubleCreditsAtRepeatableRead) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeeds, on_mariadb(Isolation::kRepeatableRead)),
            std::set<std::string>{"double_credit"});
}

TEST(MariadbRun, CheckInTxnPassesAtSerializable) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeeds, on_mariadb(Isolation::kSerializable)), kNone);
}

TEST(MariadbRun, RmwInTxnLosesAnUpdateAtRepeatableRead) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-topups"), "rmw-in-txn", kSeeds, on_mariadb(Isolation::kRepeatableRead)),
            std::set<std::string>{"lost_update"});
}

TEST(MariadbRun, UniqueKeyCasAndSelectForUpdatePassOnEveryLevel) {
  const gateway::Scenario s = bundled_scenario("concurrent-duplicates");
  for (auto i : {Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable}) {
    EXPECT_EQ(violations(s, "unique-key+cas", 10, on_mariadb(i)), kNone) << engine::isolation_name(i);
    EXPECT_EQ(violations(s, "select-for-update", 10, on_mariadb(i)), kNone) << engine::isolation_name(i);
  }
}

// The @Transactional bug, forced: both read WAIT_PAY; T2 updates first; T1's
// UPDATE waits for T2's row lock, and once T2 commits it resumes: InnoDB's
// UPDATE reads the current row (not the snapshot), its WHERE on order_no
// still matches, and T1 credits a second time.
TEST(MariadbRegression, TheBlockedUpdateResumesAfterTheOtherCommitAndCreditsAgain) {
  const gateway::Scenario s = concurrent_copies_scenario(1);
  run::RunSpec spec{&s, &handler("check-in-txn"), {}, 0, std::nullopt};
  spec.strategy.kind = sim::StrategyKind::kScripted;
  spec.strategy.script = {1, 1, 1, 2, 2, 2, 2, 1};
  spec.engine = on_mariadb(Isolation::kRepeatableRead);
  const run::RunResult r = run::simulate(spec).value();
  EXPECT_EQ(invariants_of(r), std::vector<std::string>{"double_credit"}) << trace_text(r);
  const auto t1 = steps_of(r, 1);
  const auto waits = std::find_if(t1.begin(), t1.end(), [](const std::string& l) {
    return l.starts_with("sql UPDATE orders") && l.ends_with("-> waits for a lock another transaction holds");
  });
  ASSERT_NE(waits, t1.end()) << trace_text(r);
  ASSERT_NE(waits + 1, t1.end());
  EXPECT_TRUE(waits[1].starts_with("sql UPDATE orders") && waits[1].ends_with("-> 1 row changed")) << waits[1];
  const std::string all = trace_text(r);
  const auto wait_at = all.find("waits for a lock");
  const auto commit_at = all.find("T2   sql   COMMIT -> ok");
  const auto resumed_at = all.find("T1   sql   UPDATE orders", wait_at + 1);
  EXPECT_LT(wait_at, commit_at);
  EXPECT_LT(commit_at, resumed_at);
}

// Three copies behind one row lock: InnoDB would wake the waiters in its own
// order; at most one waits on the server, the others are queued, so the seed
// decides and the trace repeats byte for byte.
TEST(MariadbRun, TheSameSeedGivesTheSameTraceByteForByte) {
  const gateway::Scenario s = concurrent_copies_scenario(3);
  int queued_runs = 0;
  for (const char* handler_name : {"check-in-txn", "rmw-in-txn", "unique-key+cas", "select-for-update"}) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      for (auto isolation : {Isolation::kRepeatableRead, Isolation::kSerializable}) {
        const run::RunResult first = run_on(s, handler_name, seed, on_mariadb(isolation));
        const run::RunResult second = run_on(s, handler_name, seed, on_mariadb(isolation));
        EXPECT_EQ(trace_text(first), trace_text(second)) << handler_name << " seed " << seed;
        int waits = 0;
        for (const auto& e : first.trace.events()) {
          waits += e.result == "waits for a lock another transaction holds";
          EXPECT_EQ(e.result.find("releasing the savepoint"), std::string::npos) << handler_name << " seed " << seed;
        }
        queued_runs += waits >= 2;
      }
    }
  }
  EXPECT_GT(queued_runs, 0);  // the case that needs the queue did occur
}

// Acceptance: the same replay on MariaDB, twice, from the command line (each
// with its own throwaway server): byte-identical output, the double credit.
TEST(TwiceReplay, OnMariadbTwiceGivesByteIdenticalOutput) {
  const std::string args =
      "replay --handler check-in-txn --scenario concurrent-duplicates --seed 6337990874401953 --shrunk "
      "--engine mariadb --isolation repeatable-read --scenarios-dir " TWICE_SOURCE_DIR "/scenarios";
  const auto [first, first_status] = twice_command(args);
  const auto [second, second_status] = twice_command(args);
  // A replay that shows a violation exits 1.
  EXPECT_EQ(first_status, 1) << first;
  EXPECT_EQ(second_status, 1) << second;
  EXPECT_EQ(first, second);
  EXPECT_NE(first.find("# verdict: double_credit"), std::string::npos) << first;
  EXPECT_NE(first.find("concurrent-duplicates@mariadb/repeatable-read"), std::string::npos) << first;
}

}  // namespace twice::testing
