// Burst scenarios grow linearly in deliveries (issue #12): a task parked on
// SQLITE_BUSY runs again only when the lock it waits for can be granted, so
// waiting is no scheduling point of its own. Counted in the scheduler's steps
// (RunResult::steps), not in time.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support.h"

namespace twice {
namespace {

// unique-key+cas with `n` orders of `n` users, no network copies; burst pays
// them all at the same moment, spread ten seconds apart. `one_attempt`: the
// gateway sends each notification once (else it re-sends on its profile's
// schedule while a delivery queues for the lock, as bench/ BM_Growth does).
gateway::Scenario growth_scenario(bool burst, int n, bool one_attempt) {
  gateway::Scenario s = testing::bundled_scenario("concurrent-duplicates");
  s.name = fmt::format("{}-{}", burst ? "burst" : "spread", n);
  s.duplicate = 0;
  if (one_attempt) s.max_attempts = 1;
  s.orders.clear();
  for (int i = 0; i < n; ++i) {
    gateway::OrderSpec o;
    o.order_no = fmt::format("O-{}", 3000 + i);
    o.user = fmt::format("user{}", i);
    o.amount = 1000 + i;
    o.paid_at = burst ? 0 : i * 10 * kSecond;
    s.orders.push_back(o);
  }
  return s;
}

struct Counted {
  int steps = 0;
  int deliveries = 0;  // handler tasks started
  int waits = 0;       // "waits for the lock" trace lines
};

Counted run_growth(bool burst, int n, bool one_attempt, std::uint64_t seed) {
  const run::RunResult r = testing::run_seed(growth_scenario(burst, n, one_attempt), "unique-key+cas", seed);
  EXPECT_TRUE(r.verdict.violations.empty()) << n << (burst ? " at once" : " spread") << ", seed " << seed;
  Counted c;
  c.steps = r.steps;
  for (const auto& e : r.trace.events()) {
    if (e.kind == sim::TraceKind::kTask && e.text.starts_with("starts ")) ++c.deliveries;
    if (e.result.starts_with("SQLITE_BUSY, waits for the lock")) ++c.waits;
  }
  return c;
}

// Why these bounds. Spread, each delivery runs alone: its steps are its start
// and its statements, 9 for unique-key+cas (BEGIN IMMEDIATE, the log INSERT,
// the order's UPDATE, the ledger INSERT, the balance UPDATE, COMMIT, ...).
// At once, a delivery waits where it first needs the write lock (BEGIN
// IMMEDIATE): that statement is refused once (its "waits for the lock" step)
// and runs in the step that resumes it, when the lock can be granted; holding
// the write lock, the rest never waits (no other connection reads in a
// transaction). So burst(n) <= spread(n) + n, a line. Before this change each
// commit woke every waiter and each retried as a step of its own: 24,317
// steps for 32 deliveries, and 128 reached the run's 200,000-step budget.
TEST(BurstGrowth, NDeliveriesAtOnceTakeStepsLinearInN) {
  for (std::uint64_t seed : {1, 2}) {
    int previous = 0;
    for (int n : {8, 32, 128}) {
      const Counted spread = run_growth(false, n, true, seed);
      const Counted burst = run_growth(true, n, true, seed);
      ASSERT_EQ(spread.deliveries, n);
      ASSERT_EQ(burst.deliveries, n);
      EXPECT_EQ(spread.steps, 9 * n) << "spread: a delivery's own steps, seed " << seed;
      EXPECT_EQ(spread.waits, 0);
      EXPECT_LE(burst.waits, n) << n << " at once, seed " << seed;
      EXPECT_GT(burst.waits, 0) << "the deliveries no longer contend: the test tests nothing";
      EXPECT_LE(burst.steps, spread.steps + n) << n << " at once, seed " << seed;
      // Four times the deliveries, at most a little over four times the
      // steps (quadratic growth would be sixteen times).
      if (previous) {
        EXPECT_LT(burst.steps, 5 * previous) << n << " at once, seed " << seed;
      }
      previous = burst.steps;
    }
  }
}

// With the profile's re-sends (as bench/ BM_Growth runs them): a queueing
// delivery times out and the gateway sends again, so more deliveries are made
// the more wait; still each costs its own steps and at most one wait.
TEST(BurstGrowth, ReSentDeliveriesEachCostTheirOwnStepsAndOneWaitAtMost) {
  for (int n : {32, 128}) {
    const Counted burst = run_growth(true, n, false, 1);
    EXPECT_GT(burst.deliveries, n) << "no re-sends: the test tests nothing";
    EXPECT_LE(burst.waits, burst.deliveries);
    EXPECT_LE(burst.steps, 9 * burst.deliveries + burst.waits) << n << " orders, " << burst.deliveries << " deliveries";
  }
}

}  // namespace
}  // namespace twice
