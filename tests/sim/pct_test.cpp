// PCT finds a depth-2 bug as often as its theorem promises, where random
// scheduling almost never does (Burckhardt et al., ASPLOS 2010: a bug of
// depth d among n tasks and k scheduling points is hit with probability at
// least 1/(n k^(d-1)) per run).
//
// The bug: two top-ups of one account. O-1's notify first runs kAudit audit
// queries, then reads the balance and writes read + amount; O-2's notify adds
// its amount with one atomic UPDATE. The balance loses O-2's top-up only when
// O-2's UPDATE falls between O-1's read and O-1's write: two ordering
// constraints, depth 2. Random scheduling must keep O-2 away from its UPDATE
// for all of O-1's audit queries, about 2^-kAudit; PCT needs O-1 to start with
// the higher priority (1/2) and its one change point to fall on the step
// after O-1's read (1/k).
#include <gtest/gtest.h>

#include "../support.h"
#include "explore/explorer.h"

namespace twice {
namespace {

constexpr int kAudit = 24;

struct AuditThenReadModifyWrite final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
    if (n.out_trade_no == "O-1") {
      for (int i = 0; i < kAudit; ++i) env.db().exec("SELECT COUNT(*) FROM ledger WHERE user_id = 'alice'");
      const Result read = env.db().exec("SELECT balance FROM accounts WHERE user_id = 'alice'");
      const std::int64_t balance = read.rows.empty() ? 0 : read.rows[0][0].as_int();
      env.db().exec("UPDATE accounts SET balance = ? WHERE user_id = 'alice'", {balance + n.amount});
    } else {
      env.db().exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {n.amount});
    }
    return Reply::ack(n);
  }
};

const HandlerInfo& audit_handler() {
  static const HandlerInfo info{"audit-then-rmw", "", [] { return std::make_unique<AuditThenReadModifyWrite>(); }};
  return info;
}

gateway::Scenario topups() {
  auto s = testing::two_topups_scenario();
  s.max_attempts = 1;  // no retries: n = 2 tasks in every run
  return s;
}

constexpr int kPctSeeds = 1000;

struct Count {
  int failing_runs = 0;
  int max_tasks = 0;
  int max_steps = 0;
};

Count count_lost_updates(const sim::StrategySpec& strategy) {
  explore::ExploreOptions o;
  o.seeds = kPctSeeds;
  o.base_seed = 1;
  o.strategy = strategy;
  o.shrink = false;
  const auto cell = explore::explore_cell(topups(), audit_handler(), o, {});
  Count c{0, cell.max_tasks, cell.max_steps};
  for (const auto& v : cell.violations)
    if (v.invariant == "lost_update") c.failing_runs = v.failures;
  EXPECT_EQ(c.failing_runs, cell.failing_runs) << "lost_update is the only thing this handler gets wrong";
  return c;
}

// k: the scheduling points of one run, measured, so the bound is the theorem's.
int steps_per_run() { return count_lost_updates({}).max_steps; }

TEST(Pct, TheBugNeedsTheInterleavingAndTheHandlerIsOtherwiseRight) {
  // Run to the end one after the other, the top-ups both land.
  const auto s = topups();
  sim::StrategySpec in_order;
  in_order.kind = sim::StrategyKind::kScripted;
  const auto ok = run::simulate(run::RunSpec{&s, &audit_handler(), in_order, 0, std::nullopt}).value();
  EXPECT_TRUE(ok.verdict.violations.empty()) << sim::format_trace(ok.trace);
  EXPECT_EQ(ok.verdict.accounts.at(0).balance, 150);
}

TEST(Pct, FindsTheDepthTwoBugAtLeastAsOftenAsItsTheoremPredicts) {
  const int k = steps_per_run();
  ASSERT_GT(k, kAudit);
  sim::StrategySpec pct;
  pct.kind = sim::StrategyKind::kPct;
  pct.pct_depth = 2;
  pct.pct_max_steps = k;
  const Count found = count_lost_updates(pct);
  ASSERT_EQ(found.max_tasks, 2);
  const int n = found.max_tasks;
  // The theorem's bound, in runs of kPctSeeds: at least kPctSeeds / (n k).
  const double predicted = static_cast<double>(kPctSeeds) / (n * k);
  RecordProperty("pct_hits", found.failing_runs);
  RecordProperty("pct_predicted_at_least", std::to_string(predicted));
  // Half the bound leaves room for the sample (binomial, mean >= ~13 here:
  // falling below half of it has a probability under 2%); a PCT that never
  // lowers a priority finds nothing at all.
  EXPECT_GE(found.failing_runs, predicted / 2) << "k=" << k << " n=" << n;
}

TEST(Pct, RandomSchedulingNeedsClearlyMoreRuns) {
  const Count random = count_lost_updates({});
  sim::StrategySpec pct;
  pct.kind = sim::StrategyKind::kPct;
  pct.pct_depth = 2;
  pct.pct_max_steps = random.max_steps;
  const Count found = count_lost_updates(pct);
  RecordProperty("random_hits", random.failing_runs);
  EXPECT_GE(found.failing_runs, 4 * std::max(random.failing_runs, 1))
      << "random " << random.failing_runs << ", pct " << found.failing_runs << " of " << kPctSeeds;
}

TEST(Pct, DepthOneCannotFindADepthTwoBug) {
  // With no change point the higher-priority top-up runs to its end first:
  // one order of the two, never the interleaving. This is what makes it depth 2.
  sim::StrategySpec pct;
  pct.kind = sim::StrategyKind::kPct;
  pct.pct_depth = 1;
  EXPECT_EQ(count_lost_updates(pct).failing_runs, 0);
}

}  // namespace
}  // namespace twice
