// The simulator's cost. (a) One schedule of a scenario under the simulator
// against the same SQL statements executed straight on one SQLite connection:
// their ratio is what the scheduler, the fibers, the trace, the gateway and
// the checker add to the work the database does anyway. (b) Schedules per
// second of each reference handler on concurrent-duplicates, one run at a time
// on one core, without a trace as `twice run` explores: what bounds
// `twice run --seeds N`.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/bench_support.h"
#include "env/seed.h"
#include "env/seeded_database.h"
#include "env/sqlite_db.h"
#include "run/simulate.h"
#include "sim/choices.h"
#include "twice/schema.h"

namespace twice::bench {
namespace {

constexpr std::uint64_t kOverheadSeed = 1;

run::RunSpec spec_for(const gateway::Scenario& scenario, const HandlerInfo& handler, std::uint64_t seed,
                      bool record_trace = true) {
  return run::RunSpec{&scenario, &handler, sim::StrategySpec{}, seed, std::nullopt, record_trace};
}

// The statements one schedule ran, task after task (each task's in its own
// order), as literal SQL from the trace. Task-serial so that one connection
// can run them: interleaved, two tasks' BEGINs would nest.
std::vector<std::string> statements_of(const run::RunResult& r) {
  std::map<int, std::vector<std::string>> per_task;
  for (const auto& e : r.trace.events()) {
    if (e.kind != sim::TraceKind::kSql) continue;
    // A statement that met SQLITE_BUSY is traced once per wait; it ran once, when it got the lock.
    if (e.result.starts_with("SQLITE_BUSY")) continue;
    per_task[e.task].push_back(e.text);
  }
  std::vector<std::string> out;
  for (auto& [task, statements] : per_task)
    for (auto& s : statements) out.push_back(std::move(s));
  return out;
}

// A fresh database file seeded as simulate() seeds it, and made as simulate()
// makes it: a copy of the database seeded on the first call. Returns its path.
std::string seeded_database(const gateway::Scenario& scenario, const Schema& schema) {
  const std::string path = env::fresh_database_path();
  env::create_seeded_database(path, fmt::format("bench {} {}", scenario.name, schema.setup_sql), [&](sqlite3* conn) {
    std::vector<env::SeedOrder> orders;
    for (const auto& o : scenario.orders) orders.push_back({o.order_no, o.user, o.amount, o.currency});
    (void)env::seed_database(conn, schema, orders);
  });
  return path;
}

// The floor simulate() stands on: the seeded database and the statements, on
// one connection, with no scheduler.
void run_statements(const gateway::Scenario& scenario, const Schema& schema, const std::vector<std::string>& statements) {
  const std::string path = seeded_database(scenario, schema);
  sqlite3* conn = env::open_database(path);
  // Errors are part of the work: a duplicate's INSERT fails on the UNIQUE key in the simulated run too.
  for (const auto& sql : statements) sqlite3_exec(conn, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(conn);
  env::remove_database(path);
}

void BM_SimulateOneSchedule(benchmark::State& state, const char* scenario_name) {
  const gateway::Scenario& scenario = bundled_scenario(scenario_name);
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  const run::RunSpec spec = spec_for(scenario, *handler, kOverheadSeed);
  std::size_t statements = 0;
  for (auto _ : state) {
    run::RunResult r = run::simulate(spec).value();
    statements = statements_of(r).size();
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["statements"] = static_cast<double>(statements);
}
BENCHMARK_CAPTURE(BM_SimulateOneSchedule, concurrent_duplicates, "concurrent-duplicates")->UseRealTime();
BENCHMARK_CAPTURE(BM_SimulateOneSchedule, concurrent_topups, "concurrent-topups")->UseRealTime();
BENCHMARK_CAPTURE(BM_SimulateOneSchedule, sequential_duplicates, "sequential-duplicates")->UseRealTime();

void BM_SameStatementsOnOneConnection(benchmark::State& state, const char* scenario_name) {
  const gateway::Scenario& scenario = bundled_scenario(scenario_name);
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  const std::vector<std::string> statements = statements_of(run::simulate(spec_for(scenario, *handler, kOverheadSeed)).value());
  const auto instance = handler->make();
  for (auto _ : state) run_statements(scenario, instance->schema(), statements);
  state.SetItemsProcessed(state.iterations());
  state.counters["statements"] = static_cast<double>(statements.size());
}
BENCHMARK_CAPTURE(BM_SameStatementsOnOneConnection, concurrent_duplicates, "concurrent-duplicates")->UseRealTime();
BENCHMARK_CAPTURE(BM_SameStatementsOnOneConnection, concurrent_topups, "concurrent-topups")->UseRealTime();
BENCHMARK_CAPTURE(BM_SameStatementsOnOneConnection, sequential_duplicates, "sequential-duplicates")->UseRealTime();

// Making the seeded database (a copy) and opening it, alone: both of the
// above pay it once per run, so subtracting it gives the cost per statement
// with and without the simulator.
void BM_SeedDatabaseOnly(benchmark::State& state, const char* scenario_name) {
  const gateway::Scenario& scenario = bundled_scenario(scenario_name);
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  const auto instance = handler->make();
  for (auto _ : state) {
    const std::string path = seeded_database(scenario, instance->schema());
    sqlite3_close(env::open_database(path));
    env::remove_database(path);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_SeedDatabaseOnly, concurrent_duplicates, "concurrent-duplicates")->UseRealTime();
BENCHMARK_CAPTURE(BM_SeedDatabaseOnly, concurrent_topups, "concurrent-topups")->UseRealTime();
BENCHMARK_CAPTURE(BM_SeedDatabaseOnly, sequential_duplicates, "sequential-duplicates")->UseRealTime();

// Each iteration is a different schedule (seed i of `twice run`'s default base seed).
void BM_SchedulesPerSecond(benchmark::State& state, const char* handler_name) {
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler(handler_name);
  if (!handler) return state.SkipWithError("handler not registered");
  std::uint64_t i = 0;
  long failing = 0;
  for (auto _ : state) {
    const run::RunResult r = run::simulate(spec_for(scenario, *handler, sim::derive_seed(1, i++), false)).value();
    if (!r.verdict.violations.empty()) ++failing;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["failing_share"] = static_cast<double>(failing) / static_cast<double>(state.iterations());
}
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, check_then_act, "check-then-act")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, lock_only, "lock-only")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, lock_check, "lock-check")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, unique_key, "unique-key")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, cas, "cas")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, unique_key_cas, "unique-key+cas")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, three_layer, "three-layer")->UseRealTime();
BENCHMARK_CAPTURE(BM_SchedulesPerSecond, read_modify_write, "read-modify-write")->UseRealTime();

}  // namespace
}  // namespace twice::bench
