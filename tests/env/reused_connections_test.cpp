// Runs on the thread's kept database (env/run_database.h: connections that
// outlive a run, the file reset in place) give what runs on a fresh file with
// fresh connections give: the same verdict, the same trace, the same choices.
// Over every bundled handler and scenario, a few fixed seeds each; the kept
// database serves the runs in an order that changes its key often (another
// scenario, another handler) and keeps it too (the next seed of the same cell),
// as `twice run` does.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gateway/scenario.h"
#include "run/simulate.h"
#include "twice/handler.h"

namespace twice {
namespace {

constexpr std::uint64_t kSeedsEach[] = {1, 2, 3};

std::string verdict_text(const run::RunResult& r) {
  std::string out;
  for (const auto& v : r.verdict.violations) out += v.invariant + " " + v.subject + ": " + v.detail + "\n";
  return out;
}

std::string trace_text(const run::RunResult& r) {
  std::string out;
  for (const auto& e : r.trace.events())
    out += std::to_string(e.time) + " T" + std::to_string(e.task) + " " + e.text + " -> " + e.result + "\n";
  return out;
}

void expect_same(const run::RunResult& fresh, const run::RunResult& kept, const std::string& where) {
  EXPECT_EQ(verdict_text(fresh), verdict_text(kept)) << where;
  EXPECT_EQ(trace_text(fresh), trace_text(kept)) << where;
  EXPECT_EQ(fresh.choices, kept.choices) << where;
  EXPECT_EQ(fresh.steps, kept.steps) << where;
  EXPECT_EQ(fresh.end_time, kept.end_time) << where;
}

TEST(ReusedConnections, GiveTheSameRunsAsFreshOnesForEveryHandlerAndScenario) {
  StatusOr<std::vector<gateway::Scenario>> all = gateway::load_scenario_dir(std::string(TWICE_SOURCE_DIR) + "/scenarios");
  ASSERT_TRUE(all.ok()) << all.status().message();
  const std::vector<gateway::Scenario>& scenarios = *all;
  ASSERT_GE(scenarios.size(), 10u);
  std::vector<const HandlerInfo*> handlers;
  for (const HandlerInfo* h : HandlerRegistry::instance().all())
    if (!h->name.starts_with("test-")) handlers.push_back(h);  // the bundled ones (tests register test-*)
  ASSERT_GE(handlers.size(), 15u);
  int runs = 0;
  for (const HandlerInfo* handler : handlers) {
    for (const auto& scenario : scenarios) {
      for (bool record_trace : {true, false}) {
        for (std::uint64_t seed : kSeedsEach) {
          run::RunSpec spec{&scenario, handler, sim::StrategySpec{}, seed, std::nullopt, record_trace};
          spec.fresh_connections = true;
          const run::RunResult fresh = run::simulate(spec).value();
          spec.fresh_connections = false;
          const run::RunResult kept = run::simulate(spec).value();
          expect_same(fresh, kept,
                      handler->name + " x " + scenario.name + " seed " + std::to_string(seed) +
                          (record_trace ? " (traced)" : " (untraced)"));
          runs += 2;
        }
      }
    }
  }
  EXPECT_GT(runs, 1000);
}

}  // namespace
}  // namespace twice
