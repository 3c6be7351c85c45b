#include "explore/explorer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "engine/engine_url.h"
#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"
#include "explore/exhaustive_cell.h"
#include "explore/shell_quote.h"
#include "explore/shrink.h"
#include "explore/transcript.h"
#include "run/simulate.h"
#include "sim/choices.h"

namespace twice::explore {

std::string scenario_ref(const gateway::Scenario& scenario) {
  return scenario.source.empty() ? scenario.name : scenario.source;
}

std::string scenario_replay_args(const gateway::Scenario& scenario) {
  std::string args = "--scenario " + shell_quote(scenario_ref(scenario));
  if (scenario.reconciler_from_option) args += " --reconciler";
  return args;
}

std::string scenario_digest_args(const gateway::Scenario& scenario) {
  return scenario.digest.empty() ? "" : " --scenario-digest " + scenario.digest;
}

void add_plugin_to_replay(std::string& command, const std::string& plugin) {
  constexpr std::string_view kPrefix = "twice replay ";
  if (plugin.empty() || !command.starts_with(kPrefix)) return;
  command.insert(kPrefix.size(), "--plugin " + shell_quote(plugin) + " ");
}

std::string engine_replay_args(const engine::EngineChoice& engine) {
  if (engine.is_sqlite()) return "";
  std::string args =
      fmt::format(" --engine {} --isolation {}", engine_name(engine.engine), engine::isolation_name(engine.isolation));
  const std::string* url = engine.postgres ? &engine.postgres->url() : engine.mariadb ? &engine.mariadb->url() : nullptr;
  if (!url || url->empty()) return args;
  const engine::PrintableUrl printable = engine::printable_engine_url(engine.engine, *url);
  args += " --engine-url " + shell_quote(printable.url);
  // A shell comment: the command still runs as pasted, where the variable is set.
  if (!printable.password_variable.empty())
    args += fmt::format("  # the URL's password is not printed: set {}", printable.password_variable);
  return args;
}

std::optional<results::EngineServer> engine_server(const engine::EngineChoice& engine) {
  results::EngineServer server;
  server.engine = engine_name(engine.engine);
  if (engine.engine == Engine::kPostgres && engine.postgres) {
    server.version = engine.postgres->version();
    server.url = engine::printable_engine_url(engine.engine, engine.postgres->url()).url;
  } else if (engine.engine == Engine::kMariadb && engine.mariadb) {
    server.version = engine.mariadb->version();
    server.url = engine::printable_engine_url(engine.engine, engine.mariadb->url()).url;
    server.settings = engine.mariadb->settings();
  } else {
    return std::nullopt;
  }
  return server;
}

std::string replay_command(const std::string& handler, const gateway::Scenario& scenario, std::uint64_t seed,
                           const sim::StrategySpec& strategy, bool shrunk, int shrink_budget,
                           const engine::EngineChoice& engine, const std::string& invariant) {
  std::string cmd = fmt::format("twice replay --handler {} {} --seed {}", shell_quote(handler),
                                scenario_replay_args(scenario), seed);
  if (strategy.kind == sim::StrategyKind::kPct)
    cmd += fmt::format(" --strategy pct --pct-depth {} --pct-steps {}", strategy.pct_depth, strategy.pct_max_steps);
  if (shrunk) cmd += " --shrunk";
  if (shrunk && !invariant.empty()) cmd += " --invariant " + shell_quote(invariant);
  if (shrunk && shrink_budget != kReplayShrinkBudget) cmd += fmt::format(" --shrink-budget {}", shrink_budget);
  return cmd + scenario_digest_args(scenario) + engine_replay_args(engine);
}

namespace {

// The stop_now of the explore_cell() under way on this thread: run_in_cell()
// is the one place every run of a cell starts, and most of its callers
// (shrinking) know nothing of the cell's options.
thread_local const process::StopNow* t_stop_now = nullptr;

class StopNowScope {
 public:
  explicit StopNowScope(const process::StopNow* stop_now) : outer_(t_stop_now) {
    if (stop_now) t_stop_now = stop_now;
  }
  ~StopNowScope() { t_stop_now = outer_; }
  StopNowScope(const StopNowScope&) = delete;
  StopNowScope& operator=(const StopNowScope&) = delete;

 private:
  const process::StopNow* outer_;
};

}  // namespace

run::RunResult run_in_cell(const run::RunSpec& spec) {
  if (t_stop_now && t_stop_now->stopped()) throw CellStopped{};
  StatusOr<run::RunResult> r = run::simulate(spec);
  if (!r.ok()) throw CellError(r.status().message());
  return std::move(r).value();
}

int measure_pct_steps(const gateway::Scenario& scenario, const HandlerInfo& handler) {
  constexpr int kCalibrationRuns = 5;
  int most = 1;
  for (int i = 0; i < kCalibrationRuns; ++i) {
    const run::RunResult r = run_in_cell(
        run::RunSpec{&scenario, &handler, {}, sim::derive_seed(0, static_cast<std::uint64_t>(i)), std::nullopt, false});
    most = std::max(most, r.choice_points);
  }
  return most;
}

sim::StrategySpec resolve_strategy(const sim::StrategySpec& strategy, const gateway::Scenario& scenario,
                                   const HandlerInfo& handler) {
  sim::StrategySpec s = strategy;
  if (s.kind == sim::StrategyKind::kPct && s.pct_max_steps <= 0) s.pct_max_steps = measure_pct_steps(scenario, handler);
  return s;
}

ChoiceSequence shrink_in_cell(run::RunSpec spec, const ChoiceSequence& start, const std::string& invariant,
                              int budget) {
  spec.record_trace = false;  // only the verdict and the choices count here
  // The passes propose a quarter of their candidates more than once.
  std::map<ChoiceSequence, std::optional<ChoiceSequence>> answered;
  return shrink(
      start,
      [&](const ChoiceSequence& candidate) -> std::optional<ChoiceSequence> {
        if (auto it = answered.find(candidate); it != answered.end()) return it->second;
        spec.choices = candidate;
        run::RunResult r = run_in_cell(spec);
        std::optional<ChoiceSequence> answer;
        if (r.has(invariant)) answer = std::move(r.choices);
        answered.emplace(candidate, answer);
        return answer;
      },
      budget);
}

Counterexample shrink_counterexample(const gateway::Scenario& scenario, const HandlerInfo& handler,
                                     const sim::StrategySpec& strategy, std::uint64_t seed,
                                     const std::string& invariant, int budget, const engine::EngineChoice& engine) {
  run::RunSpec spec{&scenario, &handler, strategy, seed, std::nullopt};
  spec.engine = engine;
  const run::RunResult original = run_in_cell(spec);

  ChoiceSequence best = original.choices;
  if (budget > 0 && original.has(invariant)) {
    // A run with a task stuck in a loop plays every candidate to its step
    // budget (tens of thousands of steps), whichever violation is shrunk, and
    // shrinking rarely shortens a loop, which is the story: before this cap a
    // handler polling the database, on one order retried on WeChat's
    // schedule, was called 51,360 times in 57 s for one seed. `twice replay
    // --shrunk` comes here too, so it spends the same.
    const int spend = original.has("stuck") ? std::min(budget, kStuckShrinkBudget) : budget;
    best = shrink_in_cell(spec, original.choices, invariant, spend);
  }
  spec.choices = best;
  const run::RunResult shrunk = run_in_cell(spec);

  Counterexample cex;
  cex.seed = seed;
  cex.choices = best;
  cex.shrunk = budget > 0 && original.has(invariant);
  cex.replay_command = replay_command(handler.name, scenario, seed, strategy, false, kReplayShrinkBudget, engine);
  // Not shrunk (budget 0): the counterexample is the failing run itself.
  // `twice replay --shrunk` shrinks for the run's first violation unless told
  // another: a seed that shows several says which this counterexample is.
  const bool first = !original.verdict.violations.empty() && original.verdict.violations.front().invariant == invariant;
  cex.replay_shrunk_command = replay_command(handler.name, scenario, seed, strategy, budget > 0, budget, engine,
                                             first || !original.has(invariant) ? std::string() : invariant);
  // The shrunk run tells the story; the original one if shrinking lost the violation.
  const run::RunResult* told = &shrunk;
  const check::Violation* v = shrunk.verdict.find(invariant);
  if (!v) v = (told = &original)->verdict.find(invariant);
  if (v) {
    build_transcript(*told, scenario, *v, cex);
    cex.subject = v->subject;
    cex.detail = v->detail;
  }
  return cex;
}

namespace {

// A cell's identity and expectation, before any run.
CellResult cell_heading(const gateway::Scenario& scenario, const HandlerInfo& handler, const ExploreOptions& options,
                        const Expectation& expected) {
  CellResult cell;
  cell.handler = handler.name;
  cell.scenario = scenario.name + options.engine.cell_suffix();
  cell.strategy = sim::strategy_name(options.strategy);
  cell.expected = expected.violations;
  cell.expected_reason = expected.reason;
  cell.expectation_listed = expected.listed;
  // Only an exhaustive search can prove: other strategies are judged on their violations.
  if (options.strategy.kind == sim::StrategyKind::kExhaustive && options.prove) cell.proof_required = expected.proved;
  return cell;
}

}  // namespace

CellResult explore_cell(const gateway::Scenario& scenario, const HandlerInfo& handler, const ExploreOptions& given,
                        const Expectation& expected) {
  const StopNowScope stop_now(given.stop_now);
  if (given.strategy.kind == sim::StrategyKind::kExhaustive)
    return explore_cell_exhaustively(scenario, handler, given, expected);
  const auto started = std::chrono::steady_clock::now();
  ExploreOptions options = given;
  options.strategy = resolve_strategy(given.strategy, scenario, handler);
  CellResult cell = cell_heading(scenario, handler, options, expected);

  std::map<std::string, ViolationResult> found;
  std::set<std::uint64_t> interleavings;
  const int runs = options.only_seed ? 1 : options.seeds;
  for (int i = 0; i < runs; ++i) {
    // A stop ends the cell after the run under way: what its seeds found so
    // far is shrunk and kept, not lost to a long cell's remaining seeds.
    if (i > 0 && options.stop && options.stop->load()) {
      cell.cut_short = true;
      break;
    }
    const std::uint64_t seed =
        options.only_seed ? *options.only_seed : sim::derive_seed(options.base_seed, static_cast<std::uint64_t>(i));
    if (options.on_run) options.on_run("exploring", i + 1, seed);
    // A failure's trace is made again by shrink_counterexample(): none is needed here.
    run::RunSpec spec{&scenario, &handler, options.strategy, seed, std::nullopt, false};
    spec.engine = options.engine;
    const run::RunResult r = run_in_cell(spec);
    ++cell.seeds_run;
    if (options.coverage) interleavings.insert(r.interleaving);
    cell.max_tasks = std::max(cell.max_tasks, static_cast<int>(r.tasks.size()));
    cell.max_steps = std::max(cell.max_steps, r.steps);
    if (!r.verdict.violations.empty()) {
      ++cell.failing_runs;
      cell.failing_run_indices.push_back(i + 1);
    }
    std::vector<std::string> seen_here;
    for (const auto& v : r.verdict.violations) {
      if (std::find(seen_here.begin(), seen_here.end(), v.invariant) != seen_here.end()) continue;
      seen_here.push_back(v.invariant);
      auto [it, first] = found.try_emplace(v.invariant);
      ViolationResult& vr = it->second;
      if (first) {
        vr.invariant = v.invariant;
        vr.subject = v.subject;
        vr.detail = v.detail;
        vr.schedules_to_first = i + 1;
        vr.seed = seed;
      }
      ++vr.failures;
    }
    if (options.stop_at_first_failure &&
        (options.stop_at_invariant.empty() ? !found.empty() : found.count(options.stop_at_invariant) > 0))
      break;
  }

  if (options.coverage) cell.distinct_schedules = static_cast<int>(interleavings.size());
  for (auto& [name, vr] : found) {
    if (options.on_run) options.on_run("shrinking " + name, vr.schedules_to_first, vr.seed);
    vr.counterexample = shrink_counterexample(scenario, handler, options.strategy, vr.seed, name,
                                              options.shrink ? options.shrink_budget : 0, options.engine);
    // Say what the transcript below shows, which may be another order.
    if (!vr.counterexample.detail.empty()) {
      vr.subject = vr.counterexample.subject;
      vr.detail = vr.counterexample.detail;
    }
    cell.violations.push_back(std::move(vr));
  }
  cell.matched = cell.observed() == cell.expected;
  cell.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return cell;
}

CellResult unfinished_cell(const gateway::Scenario& scenario, const HandlerInfo& handler, const ExploreOptions& options,
                           const Expectation& expected, CellFailure failure) {
  CellResult cell = cell_heading(scenario, handler, options, expected);
  cell.failures.push_back(std::move(failure));
  cell.matched = false;
  return cell;
}

std::string matrix_strategy_name(const ExploreOptions& options) {
  if (options.strategy.kind == sim::StrategyKind::kExhaustive && options.bounds_from_expected)
    return "exhaustive(each cell at the bounds expected.toml requires; others at " +
           sim::strategy_name(options.strategy).substr(std::string_view("exhaustive(").size());
  return sim::strategy_name(options.strategy);
}

MatrixResult explore_matrix(const std::vector<const HandlerInfo*>& handlers,
                            const std::vector<gateway::Scenario>& scenarios, const ExploreOptions& options,
                            const ExpectedMatrix& expected) {
  MatrixResult m;
  for (const auto* h : handlers) m.handlers.push_back(h->name);
  for (const auto& s : scenarios) m.scenarios.push_back(s.name + options.engine.cell_suffix());
  m.strategy = matrix_strategy_name(options);
  m.seeds = options.seeds;
  m.base_seed = options.base_seed;

  const std::size_t total = handlers.size() * scenarios.size();
  std::vector<std::optional<CellResult>> cells(total);
  std::atomic<std::size_t> next{0};
  std::mutex report_mutex;
  int done = 0;

  auto worker = [&] {
    for (;;) {
      if (options.stop && options.stop->load()) return;
      const std::size_t i = next++;
      if (i >= total) return;
      const HandlerInfo& h = *handlers[i / scenarios.size()];
      const gateway::Scenario& s = scenarios[i % scenarios.size()];
      if (options.stop_now && !options.stop_now->start()) return;  // stopped now: no cell starts
      // The harness may throw on a cell (a handler's schema that does not
      // parse): that cell says so, the others go on.
      CellFailure under_way;
      ExploreOptions cell_options = options;
      const auto started = std::chrono::steady_clock::now();
      auto told = started;
      cell_options.on_run = [&](std::string_view phase, int run, std::uint64_t seed) {
        under_way.phase = phase;
        under_way.run = run;
        under_way.seed = seed;
        if (options.on_run) options.on_run(phase, run, seed);
        // on_progress, as the cells' supervisor says it: about once a second.
        if (!options.on_progress) return;  // no clock read per run when nobody listens
        const auto now = std::chrono::steady_clock::now();
        if (now - told < std::chrono::seconds(1)) return;
        told = now;
        std::lock_guard lock(report_mutex);
        options.on_progress(h.name, s.name, phase, run,
                            std::chrono::duration<double>(now - started).count());
      };
      const Expectation& e = expected.get(h.name, s.name + options.engine.cell_suffix());
      CellResult c;
      try {
        c = explore_cell(s, h, cell_options, e);
      } catch (const CellStopped&) {
        return;  // stopped now: not finished, so not reported (the matrix is interrupted)
      } catch (const std::exception& ex) {
        under_way.verdict = fmt::format("error: {}", ex.what());
        under_way.detail = fmt::format("the harness stopped on this cell: {}", ex.what());
        if (under_way.run > 0)
          under_way.replay_command =
              replay_command(h.name, s, under_way.seed, options.strategy, false, kReplayShrinkBudget, options.engine);
        c = unfinished_cell(s, h, options, e, std::move(under_way));
      }
      // Stopped now after its last run (or its error): under way when the stop
      // came, so dropped, as the stop said.
      if (options.stop_now && !options.stop_now->finish()) return;
      std::lock_guard lock(report_mutex);
      ++done;
      if (options.on_cell) options.on_cell(c, done, static_cast<int>(total));
      cells[i] = std::move(c);
    }
  };
  const int jobs = std::max(1, std::min<int>(options.jobs, static_cast<int>(total)));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  for (auto& c : cells) m.add(std::move(c));
  return m;
}

}  // namespace twice::explore
