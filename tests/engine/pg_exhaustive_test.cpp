// The exhaustive strategy on PostgreSQL (issue 15): every schedule of
// check-in-txn × concurrent-duplicates at READ COMMITTED within the default
// bounds, without reduction (the footprint rules are SQLite's), finds the
// double credit that engine allows, from one preemption.
#include <gtest/gtest.h>

#include "engine_environment.h"
#include "explore/explorer.h"
#include "gateway/scenario.h"
#include "support.h"

namespace twice::testing {
namespace {

TEST(PgExhaustive, CheckInTxnDoubleCreditsAtReadCommittedFromOnePreemptionWithoutReduction) {
  explore::ExploreOptions o;
  o.strategy.kind = sim::StrategyKind::kExhaustive;
  o.strategy.preemption_bound = 2;
  o.strategy.max_faults = 1;
  o.engine = on_postgres(engine::Isolation::kReadCommitted);
  o.shrink = false;
  const explore::CellResult c =
      explore::explore_cell(bundled_scenario("concurrent-duplicates"), handler("check-in-txn"), o, explore::Expectation{});
  ASSERT_TRUE(c.exhaustive);
  EXPECT_TRUE(c.exhaustive->complete);
  EXPECT_EQ(c.exhaustive->reduction, "none");
  EXPECT_EQ(c.exhaustive->schedules, c.exhaustive->runs) << "no reduction: no redundant run";
  const explore::ViolationResult* found = nullptr;
  for (const auto& v : c.violations)
    if (v.invariant == "double_credit") found = &v;
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->counterexample.found_at_bound, 1);
  EXPECT_NE(found->counterexample.replay_shrunk_command.find("--engine postgres --isolation read-committed"),
            std::string::npos);
}

}  // namespace
}  // namespace twice::testing
