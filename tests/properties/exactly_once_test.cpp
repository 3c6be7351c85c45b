// Properties of exactly-once credit, over generated scenarios and schedules.
// RapidCheck's seed is fixed by the test command (RC_PARAMS); a failure prints
// the generated scenario, the run seed and the trace.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "../support.h"
#include "generators.h"
#include "sim/choices.h"

namespace twice {
namespace {

const std::vector<std::string> kCorrect = {"unique-key", "cas", "unique-key+cas", "three-layer"};

void show(const gateway::Scenario& s) {
  RC_LOG() << "scenario: " << s.orders.size() << " orders, duplicate=" << s.duplicate << " max_copies=" << s.max_copies
           << " ack_loss=" << s.ack_loss << " latency=[" << s.latency_min << "," << s.latency_max << "]us\n";
  for (const auto& o : s.orders) RC_LOG() << "  " << o.order_no << " " << o.user << " " << o.amount << " at " << o.paid_at << "\n";
}

RC_GTEST_PROP(ExactlyOnce, CorrectHandlersNeverViolateAnInvariant, ()) {
  const auto scenario = *testing::gen_scenario();
  const auto handler = *rc::gen::elementOf(kCorrect);
  const auto pct = *rc::gen::arbitrary<bool>();
  const auto seed = *rc::gen::inRange<std::uint64_t>(0, 1ULL << 53);
  show(scenario);
  sim::StrategySpec strategy;
  if (pct) {
    strategy.kind = sim::StrategyKind::kPct;
    strategy.pct_depth = *rc::gen::inRange(1, 4);
  }
  const auto r = run::simulate(run::RunSpec{&scenario, &testing::handler(handler), strategy, seed, std::nullopt});
  for (const auto& v : r.verdict.violations) RC_LOG() << v.invariant << ": " << v.detail << "\n";
  RC_LOG() << handler << " " << sim::strategy_name(strategy) << " seed " << seed << "\n" << sim::format_trace(r.trace);
  RC_ASSERT(r.verdict.violations.empty());
  // And every settled, acked payment is credited exactly once.
  for (const auto& a : r.verdict.accounts) RC_ASSERT(a.balance == a.ledger_sum);
}

RC_GTEST_PROP(ExactlyOnce, TwoRunsOfAnySeedGiveIdenticalTraces, ()) {
  const auto scenario = *testing::gen_scenario();
  const auto handler = *rc::gen::elementOf(HandlerRegistry::instance().all());
  const auto seed = *rc::gen::inRange<std::uint64_t>(0, 1ULL << 53);
  const run::RunSpec spec{&scenario, handler, {}, seed, std::nullopt};
  const auto a = run::simulate(spec);
  const auto b = run::simulate(spec);
  RC_ASSERT(sim::format_trace(a.trace) == sim::format_trace(b.trace));
  // Replaying the recorded choices is the same run too.
  run::RunSpec replay = spec;
  replay.choices = a.choices;
  RC_ASSERT(sim::format_trace(run::simulate(replay).trace) == sim::format_trace(a.trace));
}

}  // namespace
}  // namespace twice
