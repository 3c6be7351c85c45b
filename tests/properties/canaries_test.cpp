// Canaries: each known-buggy handler must be caught with its named violation
// within a bounded number of schedules, and shrink to a counterexample of two
// deliveries. Each case explores and shrinks, so this suite runs fewer cases
// (RC_PARAMS max_success is set lower for it in tests/CMakeLists.txt).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "../support.h"
#include "explore/explorer.h"

namespace twice {
namespace {

void caught_and_shrunk(const gateway::Scenario& scenario, const std::string& handler, const std::string& invariant,
                       std::uint64_t base, int max_steps) {
  explore::ExploreOptions o;
  o.seeds = 200;
  o.base_seed = base;
  o.shrink_budget = 300;
  o.stop_at_first_failure = true;
  o.stop_at_invariant = invariant;
  const auto cell = explore::explore_cell(scenario, testing::handler(handler), o, {});
  const explore::ViolationResult* v = nullptr;
  for (const auto& x : cell.violations)
    if (x.invariant == invariant) v = &x;
  RC_ASSERT(v != nullptr);
  const auto& cex = v->counterexample;
  RC_LOG() << "schedules to first failure " << v->schedules_to_first << ", shrunk to " << cex.steps
           << " steps over " << cex.columns.size() << " tasks\n";
  RC_ASSERT(cex.columns.size() == 2u);
  RC_ASSERT(cex.steps <= max_steps);
}

RC_GTEST_PROP(Canaries, CheckThenActIsCaughtWithDoubleCreditAndShrinksToTwoDeliveries, ()) {
  auto scenario = testing::concurrent_copies_scenario(*rc::gen::inRange(1, 5), 0.9);
  scenario.latency_max = *rc::gen::inRange<Micros>(1, 300) * kMillisecond;
  scenario.duplicate_delay_max = *rc::gen::inRange<Micros>(0, 100) * kMillisecond;
  caught_and_shrunk(scenario, "check-then-act", "double_credit", *rc::gen::arbitrary<std::uint64_t>(), 8);
}

RC_GTEST_PROP(Canaries, ReadModifyWriteIsCaughtWithLostUpdateAndShrinksToTwoDeliveries, ()) {
  auto scenario = testing::two_topups_scenario();
  scenario.orders[0].amount = *rc::gen::inRange<std::int64_t>(1, 100000);
  scenario.orders[1].amount = *rc::gen::inRange<std::int64_t>(1, 100000);
  scenario.latency_max = *rc::gen::inRange<Micros>(1, 300) * kMillisecond;
  caught_and_shrunk(scenario, "read-modify-write", "lost_update", *rc::gen::arbitrary<std::uint64_t>(), 14);
}

}  // namespace
}  // namespace twice
