// (c) Time to the first failure of check-then-act on concurrent duplicates,
// three ways: the simulator under PCT, under random scheduling, and real
// threads (`twice stress --until-violation`). One iteration is one search from
// a fresh start until double_credit shows; the time per iteration is the time
// to first failure. The counters say how much work that took.
#include <string>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "run/simulate.h"
#include "sim/choices.h"
#include "stress/stress_runner.h"

namespace twice::bench {
namespace {

constexpr int kScheduleCap = 100'000;  // a search that finds nothing by then is an error

void BM_FirstFailureSimulated(benchmark::State& state, sim::StrategyKind kind) {
  sim::StrategySpec strategy;
  strategy.kind = kind;
  strategy.pct_depth = 2;  // one preemption between a SELECT and the UPDATE: depth 2
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler("check-then-act");
  if (!handler) return state.SkipWithError("check-then-act is not registered");
  std::uint64_t search = 0;
  long schedules = 0;
  for (auto _ : state) {
    // Each search starts from its own base seed, as `twice run --seed <n>` would.
    ++search;
    int i = 0;
    for (; i < kScheduleCap; ++i) {
      // No trace, as `twice run` explores.
      const run::RunResult r = run::simulate(run::RunSpec{
          &scenario, handler, strategy, sim::derive_seed(search, static_cast<std::uint64_t>(i)), std::nullopt, false}).value();
      if (r.has("double_credit")) break;
    }
    if (i == kScheduleCap) return state.SkipWithError("no double_credit within the cap");
    schedules += i + 1;
  }
  state.counters["schedules_to_first"] =
      benchmark::Counter(static_cast<double>(schedules), benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_FirstFailureSimulated, pct, sim::StrategyKind::kPct)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK_CAPTURE(BM_FirstFailureSimulated, random, sim::StrategyKind::kRandom)
    ->UseRealTime()
    ->MinTime(2.0);

// The whole `twice stress --handler check-then-act --until-violation` run:
// making the database file, starting 8 threads, the rounds with a checker
// pass after each, until the first double credit.
void BM_FirstFailureStress(benchmark::State& state) {
  const HandlerInfo* handler = find_handler("check-then-act");
  if (!handler) return state.SkipWithError("check-then-act is not registered");
  stress::StressOptions options;
  options.handler = handler;
  options.threads = 8;
  options.duplicates = 2;
  options.orders = 5000;  // seeded up front, so part of the time; at several percent per order, ample
  options.stop_at_first_violation = true;
  long deliveries = 0;
  double delivering = 0;
  for (auto _ : state) {
    stress::StressReport report;
    if (const Status s = stress::run_stress(options, report); !s.ok()) return state.SkipWithError(s.message().c_str());
    if (report.stopped_by != "first violation") return state.SkipWithError("no double_credit within 5000 orders");
    deliveries += report.deliveries;
    delivering += static_cast<double>(report.elapsed) / kSecond;
  }
  state.counters["deliveries_to_first"] =
      benchmark::Counter(static_cast<double>(deliveries), benchmark::Counter::kAvgIterations);
  // The rounds alone, without making and seeding the database.
  state.counters["rounds_s"] = benchmark::Counter(delivering, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_FirstFailureStress)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace twice::bench
