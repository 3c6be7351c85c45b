#include "explore/explorer.h"

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "../support.h"
#include "../unique_temp_dir.h"
#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"
#include "explore/exhaustive_cell.h"
#include "reports/json_report.h"
#include "sim/choices.h"

namespace twice::explore {
namespace {

TEST(Explorer, CellCountsFailuresAndShrinksTheFirstOne) {
  const auto s = testing::concurrent_copies_scenario(1);
  ExploreOptions o;
  o.seeds = 60;
  const CellResult c = explore_cell(s, testing::handler("check-then-act"), o, Expectation{{"double_credit"}, "", true});
  EXPECT_EQ(c.seeds_run, 60);
  const ViolationResult* found = nullptr;
  for (const auto& x : c.violations)
    if (x.invariant == "double_credit") found = &x;
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(c.matched, c.observed() == std::vector<std::string>{"double_credit"});
  const auto& v = *found;
  // Counted again here, run by run, from the seeds the explorer says it used:
  // the counts, the failing runs and the first failure must all agree.
  int double_credits = 0, first_double_credit = 0;
  std::vector<int> failing;
  for (int i = 0; i < 60; ++i) {
    const auto r = testing::run_seed(s, "check-then-act", sim::derive_seed(o.base_seed, static_cast<std::uint64_t>(i)));
    if (!r.verdict.violations.empty()) failing.push_back(i + 1);
    if (r.has("double_credit") && ++double_credits == 1) first_double_credit = i + 1;
  }
  EXPECT_GT(double_credits, 0);
  EXPECT_LT(double_credits, 60) << "some schedules must pass, or this scenario tells nothing about counting";
  EXPECT_EQ(v.failures, double_credits);
  EXPECT_EQ(c.failing_runs, static_cast<int>(failing.size()));
  EXPECT_EQ(c.failing_run_indices, failing);
  EXPECT_EQ(v.schedules_to_first, first_double_credit);
  EXPECT_EQ(v.seed, sim::derive_seed(o.base_seed, static_cast<std::uint64_t>(first_double_credit - 1)));
  // Two deliveries, each SELECT + UPDATE + INSERT + UPDATE: eight steps.
  EXPECT_EQ(v.counterexample.columns.size(), 2u);
  EXPECT_LE(v.counterexample.steps, 8);
  EXPECT_EQ(v.counterexample.replay_command,
            "twice replay --handler check-then-act --scenario test --seed " + std::to_string(v.seed));
}

// The shrinker keeps a candidate only if it shows the violation it shrinks
// for, not any violation. This handler double-credits on every delivery, and
// puts the balance off its ledger only on a second one: shrinking for
// lost_update must keep the network's copy; a shrinker that took any failing
// candidate drops the copy (a shorter sequence, still double_credit) and
// names a counterexample that shows no lost_update (a mutant that did so
// survived every test until this one).
TEST(Explorer, AShrunkCounterexampleShowsTheViolationItWasShrunkFor) {
  struct TwoBugs final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      Db& db = env.db();
      db.exec("BEGIN IMMEDIATE");
      const Result seen = db.exec("SELECT COUNT(*) FROM ledger WHERE order_no = ?", {n.out_trade_no});
      const bool again = seen.ok() && !seen.empty() && seen.rows[0][0].as_int() > 0;
      db.exec("UPDATE orders SET status = 'PAID' WHERE order_no = ?", {n.out_trade_no});
      for (int i = 0; i < 2; ++i) {
        db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
        db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {n.amount});
      }
      if (again) db.exec("UPDATE accounts SET balance = balance + 1 WHERE user_id = 'alice'");
      db.exec("COMMIT");
      return Reply::ack(n);
    }
  };
  static const HandlerInfo info{"two-bugs", "", [] { return std::make_unique<TwoBugs>(); }};
  const auto s = testing::concurrent_copies_scenario(1, 0.5);
  std::uint64_t seed = 0;
  for (std::uint64_t i = 0; i < 200 && seed == 0; ++i) {
    const std::uint64_t candidate = sim::derive_seed(1, i);
    const auto r = run::simulate(run::RunSpec{&s, &info, {}, candidate, std::nullopt}).value();
    if (r.has("lost_update") && r.has("double_credit")) seed = candidate;
  }
  ASSERT_NE(seed, 0u) << "no seed of 200 delivered a copy";
  const Counterexample cex = shrink_counterexample(s, info, {}, seed, "lost_update", kReplayShrinkBudget);
  run::RunSpec replayed{&s, &info, {}, seed, cex.choices};
  const auto r = run::simulate(replayed).value();
  EXPECT_TRUE(r.has("lost_update")) << "the shrunk counterexample shows no lost_update";
  EXPECT_TRUE(r.has("double_credit"));
}

// A handler that polls the database until its step budget kills it: every
// shrinking candidate plays to that budget, so at most kStuckShrinkBudget of
// them are run, whatever the budget given (before the cap: 998 handler calls
// here, 51,360 in 57 s with the gateway's retries left on).
TEST(Explorer, AStuckViolationIsShrunkWithinItsOwnSmallBudget) {
  static int runs = 0;
  struct Polls final : Handler {
    Reply handle(const Notify&, Env& env) override {
      ++runs;
      for (;;) env.db().exec("SELECT 1");
    }
  };
  static const HandlerInfo info{"polls", "", [] { return std::make_unique<Polls>(); }};
  auto s = testing::concurrent_copies_scenario(1);
  s.max_attempts = 1;  // no retries: a run handles one delivery, or two with the network's copy
  ExploreOptions o;
  o.seeds = 1;
  o.shrink_budget = 1500;
  runs = 0;
  const CellResult c = explore_cell(s, info, o, Expectation{});
  // Each violation of the run (stuck; lost_payment, since nothing was
  // credited) is shrunk: per violation the seed's run, at most
  // kStuckShrinkBudget candidates and the shrunk one's run, each handling two
  // deliveries at most; and the explored run itself.
  std::vector<std::string> names;
  for (const auto& v : c.violations) names.push_back(v.invariant);
  EXPECT_NE(std::find(names.begin(), names.end(), "stuck"), names.end());
  EXPECT_LE(runs, 2 * (1 + static_cast<int>(names.size()) * (kStuckShrinkBudget + 2))) << runs;
  EXPECT_GT(runs, 2);  // it did shrink
}

TEST(Explorer, SameOptionsSameResult) {
  const auto s = testing::concurrent_copies_scenario(2);
  ExploreOptions o;
  o.seeds = 30;
  const auto a = explore_cell(s, testing::handler("check-then-act"), o, {});
  const auto b = explore_cell(s, testing::handler("check-then-act"), o, {});
  MatrixResult ma, mb;
  ma.cells = {a};
  mb.cells = {b};
  EXPECT_EQ(reports::to_json(ma).dump(), reports::to_json(mb).dump());
}

TEST(Explorer, AnUnexpectedViolationIsAMismatch) {
  const auto s = testing::concurrent_copies_scenario(1);
  ExploreOptions o;
  o.seeds = 60;
  const auto c = explore_cell(s, testing::handler("check-then-act"), o, Expectation{});
  EXPECT_FALSE(c.matched);
}

TEST(Explorer, MatrixIsHandlerMajorAndParallelRunsGiveTheSameResult) {
  const std::vector<gateway::Scenario> scenarios = {testing::concurrent_copies_scenario(1), testing::two_topups_scenario()};
  const std::vector<const HandlerInfo*> handlers = {&testing::handler("cas"), &testing::handler("read-modify-write")};
  ExploreOptions o;
  o.seeds = 25;
  o.jobs = 1;
  const auto serial = explore_matrix(handlers, scenarios, o, ExpectedMatrix{});
  o.jobs = 3;
  const auto parallel = explore_matrix(handlers, scenarios, o, ExpectedMatrix{});
  ASSERT_EQ(serial.cells.size(), 4u);
  EXPECT_EQ(serial.cells[1].handler, "cas");
  EXPECT_EQ(serial.cells[2].handler, "read-modify-write");
  EXPECT_EQ(reports::to_json(serial).dump(), reports::to_json(parallel).dump());
}

TEST(ExpectedMatrix, ParsesPassViolationsAndReasons) {
  StatusOr<ExpectedMatrix> loaded = ExpectedMatrix::load(std::string(TWICE_SOURCE_DIR) + "/scenarios/expected.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ExpectedMatrix& m = *loaded;
  const auto e = m.get("check-then-act", "concurrent-duplicates");
  EXPECT_TRUE(e.listed);
  EXPECT_EQ(e.violations, (std::vector<std::string>{"ack_before_commit", "double_credit"}));
  EXPECT_FALSE(e.reason.empty());
  EXPECT_TRUE(m.get("cas", "concurrent-duplicates").violations.empty());
  EXPECT_FALSE(m.get("nobody", "nothing").listed);
}

// A server engine's cell is listed only where the engine changes the verdict;
// otherwise it is expected to be what SQLite shows.
TEST(ExpectedMatrix, AnEngineCellNotListedIsExpectedToBeAsOnSqlite) {
  StatusOr<ExpectedMatrix> loaded = ExpectedMatrix::load(std::string(TWICE_SOURCE_DIR) + "/scenarios/expected.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ExpectedMatrix& m = *loaded;
  EXPECT_TRUE(m.get("check-in-txn", "concurrent-duplicates").violations.empty());
  EXPECT_EQ(m.get("check-in-txn", "concurrent-duplicates@postgres/read-committed").violations,
            std::vector<std::string>{"double_credit"});
  EXPECT_EQ(m.get("check-then-act", "concurrent-duplicates@postgres/serializable").violations,
            m.get("check-then-act", "concurrent-duplicates").violations);
}

// [reconciler."<handler>"] lists the cells the reconciler changes; with it,
// they replace the cells of that name (and that scenario's engine cells),
// and every other cell is as without it.
TEST(ExpectedMatrix, TheReconcilerSectionReplacesOnlyTheCellsItLists) {
  const std::string path = (testing::unique_temp_dir() / "expected-reconciler.toml").string();
  std::ofstream(path) << "[\"cas\"]\n"
                         "lost-notifications = \"lost_payment: no reconciler\"\n"
                         "paid-twice = \"lost_payment: acked as a duplicate\"\n"
                         "\"lost-notifications@postgres/serializable\" = \"lost_payment+double_credit: engine\"\n"
                         "[reconciler.\"cas\"]\n"
                         "lost-notifications = \"pass: the reconciler finds it\"\n";
  StatusOr<ExpectedMatrix> loaded = ExpectedMatrix::load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ExpectedMatrix& without = *loaded;
  EXPECT_EQ(without.get("cas", "lost-notifications").violations, std::vector<std::string>{"lost_payment"});
  const ExpectedMatrix with = without.with_reconciler();
  EXPECT_TRUE(with.get("cas", "lost-notifications").listed);
  EXPECT_TRUE(with.get("cas", "lost-notifications").violations.empty());
  EXPECT_EQ(with.get("cas", "lost-notifications").reason, "the reconciler finds it");
  EXPECT_TRUE(with.get("cas", "lost-notifications@postgres/serializable").violations.empty());
  EXPECT_EQ(with.get("cas", "paid-twice").violations, std::vector<std::string>{"lost_payment"});
  // Its names are checked like the others'.
  EXPECT_TRUE(without.check_names({"cas"}, {"lost-notifications", "paid-twice"}).ok());
  std::ofstream(path) << "[reconciler.\"cass\"]\nlost-notifications = \"pass\"\n";
  StatusOr<ExpectedMatrix> misspelt = ExpectedMatrix::load(path);
  ASSERT_TRUE(misspelt.ok()) << misspelt.status().message();
  const Status names = misspelt->check_names({"cas"}, {"lost-notifications"});
  EXPECT_NE(names.message().find(path + ":1: unknown handler 'cass'"), std::string::npos) << names.message();
}

// The part of a cell's name after '@' is checked too: a misspelt level named
// a cell no run has, so its expectation was silently never applied.
TEST(ExpectedMatrix, AnEngineCellNameIsCheckedAfterItsAt) {
  const std::string path = (testing::unique_temp_dir() / "expected-engines.toml").string();
  const auto error_for = [&](const std::string& cell) {
    std::ofstream(path) << "[\"cas\"]\n\"" << cell << "\" = \"double_credit: x\"\n";
    StatusOr<ExpectedMatrix> loaded = ExpectedMatrix::load(path);
    if (!loaded.ok()) return loaded.status().message();
    return loaded->check_names({"cas"}, {"concurrent-duplicates"}).message();
  };
  EXPECT_EQ(error_for("concurrent-duplicates@postgres/read-committed"), "");
  EXPECT_EQ(error_for("concurrent-duplicates@mariadb/serializable"), "");
  EXPECT_EQ(error_for("concurrent-duplicates@postgres/read-comitted"),
            path + ":2: 'concurrent-duplicates@postgres/read-comitted' for cas: unknown isolation level "
                   "'read-comitted'; allowed: read-committed, repeatable-read, serializable");
  EXPECT_EQ(error_for("concurrent-duplicates@oracle/read-committed"),
            path + ":2: 'concurrent-duplicates@oracle/read-committed' for cas: unknown engine 'oracle'; a cell on a "
                   "server engine is named scenario@postgres/LEVEL or scenario@mariadb/LEVEL");
  EXPECT_EQ(error_for("concurrent-duplicates@sqlite"),
            path + ":2: 'concurrent-duplicates@sqlite' for cas: a SQLite cell is named without '@...': write the "
                   "scenario's name alone");
  EXPECT_NE(error_for("concurrent-duplicates@postgres").find("the isolation level is missing"), std::string::npos);
  // A misspelt section reads as a handler whose cells are tables.
  std::ofstream(path) << "[reconcilr.\"cas\"]\nlost-notifications = \"pass\"\n";
  EXPECT_EQ(ExpectedMatrix::load(path).status().message(),
            path + ":1: [reconcilr.\"cas\"]: 'reconcilr' is no section of the expected matrix; the sections are "
                   "[reconciler.\"<handler>\"] and [proved.\"<handler>\"], a handler's own table is [\"<handler>\"]");
}

// The bundled file knows what the reconciler changes and what it does not.
TEST(ExpectedMatrix, TheBundledReconcilerSectionKeepsLostPaymentsTheReconcilerCannotSee) {
  StatusOr<ExpectedMatrix> loaded = ExpectedMatrix::load(std::string(TWICE_SOURCE_DIR) + "/scenarios/expected.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const ExpectedMatrix with = loaded->with_reconciler();
  EXPECT_TRUE(with.get("unique-key+cas", "lost-notifications").violations.empty());
  EXPECT_EQ(with.get("check-in-txn", "paid-twice").violations, std::vector<std::string>{"lost_payment"});
  EXPECT_EQ(with.get("check-in-txn", "close-race").violations, std::vector<std::string>{"lost_payment"});
}

TEST(ExpectedMatrix, AMisspeltInvariantIsAnErrorNamingTheLineAndTheInvariants) {
  const std::string path = (testing::unique_temp_dir() / "expected.toml").string();
  std::ofstream(path) << "[\"cas\"]\nconcurrent-duplicates = \"pass\"\nsequential-duplicates = \"double_credti: a typo\"\n";
  const StatusOr<ExpectedMatrix> bad = ExpectedMatrix::load(path);
  ASSERT_FALSE(bad.ok());
  const std::string& err = bad.status().message();
  EXPECT_NE(err.find(path + ":3: 'double_credti' is not an invariant; write \"pass\" or one of double_credit"),
            std::string::npos)
      << err;
  std::ofstream(path) << "[\"cas\"]\nsequential-duplicates = \"double_credit+lost_update: both\"\n";
  const StatusOr<ExpectedMatrix> ok = ExpectedMatrix::load(path);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->get("cas", "sequential-duplicates").violations, (std::vector<std::string>{"double_credit", "lost_update"}));
}

// audit: "double_credit+double_credit" loaded, and no run can show one
// invariant twice: the cell could never match.
TEST(ExpectedMatrix, AnInvariantListedTwiceInACellIsAnError) {
  const std::string path = (testing::unique_temp_dir() / "expected.toml").string();
  std::ofstream(path) << "[\"cas\"]\nconcurrent-duplicates = \"pass\"\n"
                         "sequential-duplicates = \"double_credit+lost_update+double_credit: x\"\n";
  const StatusOr<ExpectedMatrix> bad = ExpectedMatrix::load(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), path + ":3: double_credit is listed twice; list each invariant once");
}

// A run on an --engine-url server replays only there: its replay commands name
// it, shell-quoted, and never with its password (reports are CI artifacts):
// a shell comment says which variable the client reads it from instead.
TEST(ReplayCommand, NamesTheEngineUrlWithoutItsPassword) {
  engine::MariadbCluster maria("mysql://app:s3cr%40t@db.internal:3307/pay");
  engine::EngineChoice on_maria;
  on_maria.engine = Engine::kMariadb;
  on_maria.isolation = engine::Isolation::kRepeatableRead;
  on_maria.mariadb = &maria;
  const gateway::Scenario s = testing::concurrent_copies_scenario(1);
  const std::string cmd = replay_command("rmw-in-txn", s, 42, sim::StrategySpec{}, true, kReplayShrinkBudget, on_maria);
  EXPECT_EQ(cmd.substr(cmd.find(" --engine ")),
            " --engine mariadb --isolation repeatable-read --engine-url mysql://app@db.internal:3307/pay"
            "  # the URL's password is not printed: set MYSQL_PWD");
  EXPECT_EQ(cmd.find("s3cr"), std::string::npos);
  // The exhaustive strategy's replay too.
  const std::string schedule = schedule_replay_command("rmw-in-txn", s, {0, 1}, on_maria);
  EXPECT_NE(schedule.find(" --engine-url mysql://app@db.internal:3307/pay  # "), std::string::npos) << schedule;

  // No password: no comment; a socket path is quoted.
  engine::MariadbCluster local("mysql://root@localhost?socket=/run/my sql/s");
  on_maria.mariadb = &local;
  EXPECT_EQ(engine_replay_args(on_maria),
            " --engine mariadb --isolation repeatable-read --engine-url 'mysql://root@localhost?socket=/run/my sql/s'");

  // PostgreSQL: the user's password and a password= parameter go, the other parameters stay.
  engine::PgCluster pg("postgresql://app:pw@db:5433/pay?sslmode=require&password=other&application_name=x");
  engine::EngineChoice on_pg;
  on_pg.engine = Engine::kPostgres;
  on_pg.isolation = engine::Isolation::kSerializable;
  on_pg.postgres = &pg;
  EXPECT_EQ(engine_replay_args(on_pg),
            " --engine postgres --isolation serializable --engine-url "
            "'postgresql://app@db:5433/pay?sslmode=require&application_name=x'  # the URL's password is not printed: "
            "set PGPASSWORD");
  // A parameter spelt so that the text does not show it is a password (an
  // encoded key): libpq's own reading, without it.
  engine::PgCluster encoded("postgres://app@db/pay?pass%77ord=pw");
  on_pg.postgres = &encoded;
  EXPECT_EQ(engine_replay_args(on_pg),
            " --engine postgres --isolation serializable --engine-url "
            "'postgresql://?user=app&dbname=pay&host=db'  # the URL's password is not printed: set PGPASSWORD");
  // Twice's own server: no URL at all.
  engine::PgCluster own;
  on_pg.postgres = &own;
  EXPECT_EQ(engine_replay_args(on_pg), " --engine postgres --isolation serializable");
}

}  // namespace
}  // namespace twice::explore
