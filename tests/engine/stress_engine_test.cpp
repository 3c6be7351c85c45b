// Stress mode on the server engines: real threads, each on its own blocking
// connection, against the PostgreSQL and MariaDB servers the binary starts.
// The verdicts are the simulator's (docs/engines.md): check-in-txn
// double-credits on PostgreSQL read committed and MariaDB repeatable read,
// cas does not. The retryable errors reach the handler as the simulator's
// Status kinds. No assertion depends on speed: a race's rate is not asserted,
// only that it shows within a bound of orders far above what it takes.
#include <gtest/gtest.h>

#include <thread>

#include "engine/mariadb_db.h"
#include "engine_environment.h"
#include "stress/server_worker_db.h"
#include "stress/stress_runner.h"

namespace twice::testing {
namespace {

using engine::Isolation;

const HandlerInfo& registered(const char* name) {
  const HandlerInfo* h = HandlerRegistry::instance().find(name);
  if (!h) throw std::runtime_error(std::string("handler not registered: ") + name);
  return *h;
}

// Two copies of each order released together on a barrier, two groups.
stress::StressOptions racing_copies(const char* handler, engine::EngineChoice engine, long orders) {
  stress::StressOptions o;
  o.handler = &registered(handler);
  o.threads = 4;
  o.duplicates = 2;
  o.orders = orders;
  o.engine = engine;
  return o;
}

// The rate measured on two shared cores was 40-50% of orders on PostgreSQL
// read committed (every copy's BEGIN; SELECT leaves the barrier together, and
// a statement is a round trip to another process, so each copy reads before
// the other commits): 1000 orders without one would mean the copies no longer race.
TEST(StressOnPostgres, CheckInTxnDoubleCreditsAtReadCommitted) {
  stress::StressOptions options = racing_copies("check-in-txn", on_postgres(Isolation::kReadCommitted), 1000);
  options.stop_at_first_violation = true;
  stress::StressReport report;
  const Status s = stress::run_stress(options, report);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(report.database, "PostgreSQL read-committed");
  EXPECT_EQ(report.stopped_by, "first violation");
  EXPECT_EQ(report.violations_per_invariant.count("double_credit"), 1u);
}

// The compare-and-swap re-checks the row after waiting for the other copy's
// lock (read committed's re-read of the updated row): one credit per order.
TEST(StressOnPostgres, CasCreditsEveryOrderOnceAtReadCommitted) {
  const stress::StressOptions options = racing_copies("cas", on_postgres(Isolation::kReadCommitted), 500);
  stress::StressReport report;
  const Status s = stress::run_stress(options, report);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(report.orders_run, 500);
  EXPECT_TRUE(report.verdict.violations.empty()) << report.verdict.violations.front().detail;
  EXPECT_EQ(report.verdict.credits_per_order.size(), 500u);
  EXPECT_EQ(report.acked, 1000);
}

// At repeatable read the second copy's UPDATE fails with 40001 (and the two
// groups' credits of one account collide too): the handler answers 5xx, the
// copy is delivered again, and no order goes uncredited.
TEST(StressOnPostgres, SerializationFailuresAreRetriedByRedeliveryAtRepeatableRead) {
  const stress::StressOptions options = racing_copies("check-in-txn", on_postgres(Isolation::kRepeatableRead), 300);
  stress::StressReport report;
  const Status s = stress::run_stress(options, report);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(report.verdict.violations.empty()) << report.verdict.violations.front().detail;
  EXPECT_EQ(report.verdict.credits_per_order.size(), 300u);
}

// Without redeliveries, an order both of whose copies failed with a
// retryable error is not credited: lost_payment is what the checker says
// then, which is why stress mode redelivers by default.
TEST(StressOnPostgres, WithoutRedeliveriesUnackedOrdersAreNotCredited) {
  stress::StressOptions options = racing_copies("cas", on_postgres(Isolation::kSerializable), 300);
  options.redeliveries = 0;
  stress::StressReport report;
  ASSERT_TRUE(stress::run_stress(options, report).ok());
  EXPECT_EQ(report.redeliveries, 0);
  // Each order's first copy to commit credits it; only an order neither
  // copy committed is uncredited, and then neither copy was acked.
  const long uncredited = report.orders_run - static_cast<long>(report.verdict.credits_per_order.size());
  EXPECT_EQ(report.violations_per_invariant.count("double_credit"), 0u);
  EXPECT_EQ(report.violations_per_invariant.count("lost_payment") ? report.violations_per_invariant.at("lost_payment")
                                                                    : 0,
            uncredited);
}

TEST(StressOnMariadb, CheckInTxnDoubleCreditsAtRepeatableRead) {
  stress::StressOptions options = racing_copies("check-in-txn", on_mariadb(Isolation::kRepeatableRead), 1000);
  options.stop_at_first_violation = true;
  stress::StressReport report;
  const Status s = stress::run_stress(options, report);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(report.database, "MariaDB (InnoDB) repeatable-read");
  EXPECT_EQ(report.stopped_by, "first violation");
  EXPECT_EQ(report.violations_per_invariant.count("double_credit"), 1u);
}

TEST(StressOnMariadb, CasCreditsEveryOrderOnceAtRepeatableRead) {
  const stress::StressOptions options = racing_copies("cas", on_mariadb(Isolation::kRepeatableRead), 300);
  stress::StressReport report;
  const Status s = stress::run_stress(options, report);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_TRUE(report.verdict.violations.empty()) << report.verdict.violations.front().detail;
  EXPECT_EQ(report.verdict.credits_per_order.size(), 300u);
}

// A handler without the engine's schema is a setup error, named.
TEST(StressOnPostgres, AHandlerWithoutAPostgresSchemaIsAnError) {
  HandlerInfo sqlite_only{"sqlite-only", "", [] {
                            struct SqliteOnly final : Handler {
                              Reply handle(const Notify& n, Env&) override { return Reply::ack(n); }
                              const Schema& schema() const override {
                                static const Schema s = [] {
                                  Schema x;
                                  x.setup_sql = "CREATE TABLE t (x INTEGER)";
                                  return x;
                                }();
                                return s;
                              }
                            };
                            return std::make_unique<SqliteOnly>();
                          }};
  stress::StressOptions options = racing_copies("cas", on_postgres(Isolation::kReadCommitted), 10);
  options.handler = &sqlite_only;
  stress::StressReport report;
  const Status s = stress::run_stress(options, report);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Schema::postgres_setup_sql"), std::string::npos) << s.message();
}

// --- The worker's blocking Db: the server's errors as the simulator's Status kinds ---

class WorkerDbOnPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(postgres().lease(database_).ok());
    ASSERT_TRUE(database_->prepare("worker db test", "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL);",
                                   {{"INSERT INTO t VALUES (1, 0), (2, 0)", {}}})
                    .ok());
  }
  void TearDown() override {
    if (database_) postgres().give_back(std::move(database_));
  }
  std::unique_ptr<stress::PgWorkerDb> open(Isolation level, Micros lock_timeout = 5 * kSecond) {
    auto db = std::make_unique<stress::PgWorkerDb>(database_->conninfo(), level, lock_timeout);
    EXPECT_TRUE(db->status().ok()) << db->status().to_string();
    return db;
  }
  std::unique_ptr<engine::PgDatabase> database_;
};

TEST_F(WorkerDbOnPostgres, AWriteAfterAConcurrentCommitAtRepeatableReadIsASerializationFailure) {
  auto a = open(Isolation::kRepeatableRead);
  auto b = open(Isolation::kRepeatableRead);
  ASSERT_TRUE(a->exec("BEGIN").ok());
  ASSERT_EQ(a->exec("SELECT v FROM t WHERE k = ?", {1}).rows.size(), 1u);  // the snapshot is taken
  ASSERT_TRUE(b->exec("UPDATE t SET v = v + 1 WHERE k = ?", {1}).ok());
  const Result r = a->exec("UPDATE t SET v = v + 1 WHERE k = ?", {1});
  EXPECT_TRUE(r.status.is_serialization()) << r.status.to_string();
  EXPECT_TRUE(a->in_transaction());  // aborted, until the handler rolls back
  // COMMIT of the aborted transaction answers ROLLBACK: an error, not a commit.
  EXPECT_FALSE(a->exec("COMMIT").ok());
  EXPECT_FALSE(a->in_transaction());
}

TEST_F(WorkerDbOnPostgres, ALockHeldPastTheLockTimeoutIsALockTimeout) {
  auto holder = open(Isolation::kReadCommitted);
  auto waiter = open(Isolation::kReadCommitted, 50 * kMillisecond);
  ASSERT_TRUE(holder->exec("BEGIN").ok());
  ASSERT_TRUE(holder->exec("UPDATE t SET v = 1 WHERE k = 1").ok());
  const Result r = waiter->exec("UPDATE t SET v = 2 WHERE k = 1");
  EXPECT_TRUE(r.status.is_lock_timeout()) << r.status.to_string();
  EXPECT_TRUE(r.status.is_retryable());
}

TEST_F(WorkerDbOnPostgres, OfTwoTransactionsLockingCrosswiseOneIsADeadlockVictim) {
  auto a = open(Isolation::kReadCommitted);
  auto b = open(Isolation::kReadCommitted);
  ASSERT_TRUE(a->exec("BEGIN").ok());
  ASSERT_TRUE(b->exec("BEGIN").ok());
  ASSERT_TRUE(a->exec("UPDATE t SET v = 1 WHERE k = 1").ok());
  ASSERT_TRUE(b->exec("UPDATE t SET v = 1 WHERE k = 2").ok());
  Result from_a;
  std::thread other([&] { from_a = a->exec("UPDATE t SET v = 2 WHERE k = 2"); });  // waits for b
  const Result from_b = b->exec("UPDATE t SET v = 2 WHERE k = 1");                   // closes the cycle
  // The survivor's statement returns once the victim rolls back; end both.
  if (from_b.ok()) (void)b->exec("ROLLBACK");
  other.join();
  if (from_a.ok()) (void)a->exec("ROLLBACK");
  EXPECT_NE(from_a.status.is_deadlock(), from_b.status.is_deadlock())
      << from_a.status.to_string() << " / " << from_b.status.to_string();
}

class WorkerDbOnMariadb : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(mariadb().lease(database_).ok());
    ASSERT_TRUE(database_
                    ->prepare("worker db test", "CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL) ENGINE=InnoDB;",
                              {{"INSERT INTO t VALUES (1, 0), (2, 0)", {}}})
                    .ok());
  }
  void TearDown() override {
    if (database_) mariadb().give_back(std::move(database_));
  }
  std::unique_ptr<stress::MariadbWorkerDb> open(Isolation level, Micros lock_timeout = 5 * kSecond) {
    auto db = std::make_unique<stress::MariadbWorkerDb>(database_->address(), database_->name(), level, lock_timeout);
    EXPECT_TRUE(db->status().ok()) << db->status().to_string();
    return db;
  }
  std::unique_ptr<engine::MariadbDatabase> database_;
};

TEST_F(WorkerDbOnMariadb, ChangesCountsRowsMatchedNotRowsChanged) {
  auto db = open(Isolation::kRepeatableRead);
  const Result r = db->exec("UPDATE t SET v = 0 WHERE k = ?", {1});  // v is 0 already
  ASSERT_TRUE(r.ok()) << r.status.to_string();
  EXPECT_EQ(r.changes, 1);
}

TEST_F(WorkerDbOnMariadb, ALockHeldPastTheLockWaitTimeoutIsALockTimeout) {
  auto holder = open(Isolation::kRepeatableRead);
  auto waiter = open(Isolation::kRepeatableRead, 1 * kMillisecond);  // InnoDB's least: one second
  ASSERT_TRUE(holder->exec("BEGIN").ok());
  ASSERT_TRUE(holder->exec("UPDATE t SET v = 1 WHERE k = 1").ok());
  const Result r = waiter->exec("UPDATE t SET v = 2 WHERE k = 1");
  EXPECT_TRUE(r.status.is_lock_timeout()) << r.status.to_string();
}

// What MariadbRun relies on to tell a wait InnoDB has looked at for a
// deadlock from one it has not (mariadb_db.h): the server counts a row lock
// wait in Innodb_row_lock_current_waits once it has checked it, and stops
// counting it when the wait ends; the status shows it from the enqueue on.
TEST_F(WorkerDbOnMariadb, TheServerCountsARowLockWaitWhileTheStatusShowsIt) {
  auto current_waits = [&] {
    const Result c = database_->checker().query("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_current_waits'");
    return c.ok() && !c.empty() ? std::stoll(c.rows[0][1].as_text()) : -1;
  };
  auto shown_waits = [&] {
    const Result w = database_->checker().query("SHOW ENGINE INNODB STATUS");
    return w.ok() && !w.empty() && w.rows[0].size() >= 3 ? engine::count_lock_waits(w.rows[0][2].as_text())
                                                          : std::size_t{0};
  };
  ASSERT_EQ(current_waits(), 0);
  auto holder = open(Isolation::kRepeatableRead);
  auto waiter = open(Isolation::kRepeatableRead);
  ASSERT_TRUE(holder->exec("BEGIN").ok());
  ASSERT_TRUE(holder->exec("UPDATE t SET v = 1 WHERE k = 1").ok());
  Result waited;
  std::thread other([&] { waited = waiter->exec("UPDATE t SET v = 2 WHERE k = 1"); });
  long long counted = 0;
  std::size_t shown = 0;
  for (int i = 0; i < 3000 && (counted != 1 || shown != 1); ++i) {
    counted = current_waits();
    shown = shown_waits();
    if (counted != 1 || shown != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(shown, 1u);
  EXPECT_EQ(counted, 1);
  ASSERT_TRUE(holder->exec("ROLLBACK").ok());
  other.join();
  EXPECT_TRUE(waited.ok()) << waited.status.to_string();
  EXPECT_EQ(shown_waits(), 0u);
  EXPECT_EQ(current_waits(), 0);
}

TEST_F(WorkerDbOnMariadb, OfTwoTransactionsLockingCrosswiseOneIsADeadlockVictimAndRolledBack) {
  auto a = open(Isolation::kRepeatableRead);
  auto b = open(Isolation::kRepeatableRead);
  ASSERT_TRUE(a->exec("BEGIN").ok());
  ASSERT_TRUE(b->exec("BEGIN").ok());
  ASSERT_TRUE(a->exec("UPDATE t SET v = 1 WHERE k = 1").ok());
  ASSERT_TRUE(b->exec("UPDATE t SET v = 1 WHERE k = 2").ok());
  Result from_a;
  std::thread other([&] { from_a = a->exec("UPDATE t SET v = 2 WHERE k = 2"); });
  // InnoDB finds the cycle when the second wait closes it; the waiting
  // statement must be on the server first, or there is no cycle yet (either
  // way one of the two fails, but only a cycle makes it a deadlock).
  // SHOW ENGINE INNODB STATUS, as MariadbRun asks: INNODB_TRX is a cache
  // that missed this wait for seconds.
  for (int i = 0; i < 3000; ++i) {
    const Result w = database_->checker().query("SHOW ENGINE INNODB STATUS");
    if (w.ok() && !w.empty() && w.rows[0].size() >= 3) {
      const std::string status = w.rows[0][2].as_text();
      const std::size_t list = status.find("LIST OF TRANSACTIONS");
      if (list != std::string::npos && status.find("LOCK WAIT", list) != std::string::npos) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const Result from_b = b->exec("UPDATE t SET v = 2 WHERE k = 1");
  if (from_b.ok()) (void)b->exec("ROLLBACK");
  other.join();
  if (from_a.ok()) (void)a->exec("ROLLBACK");
  ASSERT_NE(from_a.status.is_deadlock(), from_b.status.is_deadlock())
      << from_a.status.to_string() << " / " << from_b.status.to_string();
  // The victim's transaction is gone: nothing for the runner to roll back.
  EXPECT_FALSE((from_a.status.is_deadlock() ? a : b)->in_transaction());
}

// The command, with the server it starts itself: one report, the engine named.
TEST(TwiceStress, OnPostgresReportsTheDoubleCreditAndExitsOne) {
  const CommandOutput out = twice_command(
      "stress --handler check-in-txn --engine postgres --isolation read-committed --threads 4 --duplicates 2 "
      "--orders 1000 --until-violation --quiet");
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("2 copies of each order released together, PostgreSQL read-committed"), std::string::npos)
      << out.output;
  // Which server: its version, and that twice started it.
  const std::size_t server = out.output.find("\n  server       postgres server ");
  EXPECT_NE(server, std::string::npos) << out.output;
  EXPECT_NE(out.output.find(", started by twice\n", server), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("double_credit"), std::string::npos) << out.output;
}

TEST(TwiceStress, AWrongUrlIsOneLineAndExitTwo) {
  const CommandOutput out =
      twice_command("stress --handler cas --engine postgres --engine-url postgres://nobody@/nodb?host=/nonexistent "
                    "--orders 10 --quiet");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("twice: stress: --engine-url 'postgres://nobody@/nodb?host=/nonexistent': cannot connect to "
                            "PostgreSQL"),
            std::string::npos)
      << out.output;
}

}  // namespace
}  // namespace twice::testing
