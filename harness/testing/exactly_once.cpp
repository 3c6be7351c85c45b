// check_exactly_once() and check_run(): the explorer and the text report, put
// behind the small public API of twice/testing.h.
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "explore/explorer.h"
#include "reports/text_report.h"
#include "run/simulate.h"
#include "testing/engine_servers.h"
#include "testing/scenario_selection.h"
#include "twice/testing.h"

namespace twice::testing {
namespace {

Report failed(std::string message) {
  Report r;
  r.message = std::move(message);
  return r;
}

// OK when the options make sense, else what to fix.
Status check_options(const Options& o) {
  if (o.seeds < 1) return Status::error(fmt::format("Options::seeds is {}; it must be at least 1", o.seeds));
  if (o.strategy != "random" && o.strategy != "pct")
    return Status::error(fmt::format("Options::strategy is \"{}\"; allowed: \"random\", \"pct\"", o.strategy));
  if (o.pct_depth < 1 || o.pct_depth > 10)
    return Status::error(fmt::format("Options::pct_depth is {}; allowed: 1 to 10", o.pct_depth));
  if (o.shrink_budget < 0) return Status::error("Options::shrink_budget must not be negative");
  return check_skip(o);
}

sim::StrategySpec strategy_of(const Options& o) {
  sim::StrategySpec s;
  s.kind = o.strategy == "pct" ? sim::StrategyKind::kPct : sim::StrategyKind::kRandom;
  s.pct_depth = o.pct_depth;
  return s;
}

StatusOr<std::vector<gateway::Scenario>> load_all(const std::vector<std::string>& refs, const Options& o) {
  std::vector<gateway::Scenario> out;
  for (const auto& ref : refs) {
    StatusOr<gateway::Scenario> s = gateway::load_scenario_ref(ref, o.bundled_dir);
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

// One run, on the caller's thread, so that a schema the database rejects (a
// typo in setup_sql, an insert_order_sql with the wrong columns) comes back as
// a message instead of an exception on an explorer thread. A handler's own
// exceptions never get here: they answer HTTP 500 inside the run.
StatusOr<run::RunResult> run_guarded(const gateway::Scenario& scenario, const HandlerInfo& handler,
                                     const sim::StrategySpec& strategy, std::uint64_t seed,
                                     const engine::EngineChoice& engine) {
  run::RunSpec spec{&scenario, &handler, strategy, seed, std::nullopt};
  spec.engine = engine;
  StatusOr<run::RunResult> r = run::simulate(spec);
  if (r.ok()) return r;
  std::string message =
      fmt::format("{} on {}: the run could not start: {}", handler.name, scenario.name, r.status().message());
  // A bundled scenario may need what only twice's own programs have (the
  // reference schema's merchant jobs).
  if (scenario.source.empty())
    message += fmt::format(" (if your handler is not meant for {0}, leave it out: Options::skip = {{\"{0}\"}})",
                           scenario.name);
  return Status::error(message);
}

// `twice` can replay only a handler it can load: put the plugin in the command.
void add_plugin(std::string& command, const std::string& plugin) {
  const std::string prefix = "twice replay ";
  if (!plugin.empty() && command.starts_with(prefix))
    command = prefix + "--plugin " + plugin + " " + command.substr(prefix.size());
}

std::string replay_hint(const Options& o) {
  if (!o.plugin.empty()) return "";
  return "\n(`twice replay` runs a handler it can load: build yours as a plugin (twice::plugin) and add "
         "--plugin path/to/libyours.so, or set Options::plugin to have it printed above.)\n";
}

// The rendered counterexamples of the cells that failed, with the plugin in their replay commands.
std::string render_failures(std::vector<explore::CellResult>& cells, const Options& o) {
  reports::TextOptions text;
  std::string out;
  for (auto& cell : cells) {
    for (auto& v : cell.violations) {
      add_plugin(v.counterexample.replay_command, o.plugin);
      add_plugin(v.counterexample.replay_shrunk_command, o.plugin);
      out += "\n" + reports::render_counterexample(cell, v, text);
    }
  }
  return out;
}

}  // namespace

Report check_exactly_once(std::string_view handler, const Options& options) {
  const HandlerInfo* h = HandlerRegistry::instance().find(handler);
  if (!h) {
    std::string names;
    for (const auto* x : HandlerRegistry::instance().all()) names += (names.empty() ? "" : ", ") + x->name;
    return failed(fmt::format("no handler registered as '{}' in this program (registered: {}); register it with "
                              "TWICE_REGISTER_HANDLER in a .cpp file linked into the test",
                              handler, names.empty() ? "none" : names));
  }
  return check_exactly_once(*h, options);
}

Report check_exactly_once(const HandlerInfo& handler, const Options& options) {
  if (Status bad = check_options(options); !bad.ok()) return failed(bad.message());
  StatusOr<engine::EngineChoice> engine = engine_of(options);
  if (!engine.ok()) return failed(engine.status().message());
  const std::vector<std::string> refs = scenario_refs(options);
  if (refs.empty()) return failed("no scenarios: Options::bundled is false and Options::scenarios is empty");
  StatusOr<std::vector<gateway::Scenario>> loaded = load_all(refs, options);
  if (!loaded.ok()) return failed(loaded.status().message());
  const std::vector<gateway::Scenario>& scenarios = *loaded;
  for (const auto& s : scenarios)
    if (StatusOr<run::RunResult> r = run_guarded(s, handler, strategy_of(options), options.seed, *engine); !r.ok())
      return failed(r.status().message());

  explore::ExploreOptions explore;
  explore.seeds = options.seeds;
  explore.base_seed = options.seed;
  explore.strategy = strategy_of(options);
  explore.shrink = options.shrink_budget > 0;
  explore.shrink_budget = options.shrink_budget;
  explore.jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  explore.engine = *engine;
  // No expected matrix: a handler under test is held to exactly-once everywhere.
  explore::MatrixResult m = explore::explore_matrix({&handler}, scenarios, explore, explore::ExpectedMatrix{});

  Report report;
  std::string summary;
  for (const auto& cell : m.cells) {
    report.runs += cell.seeds_run;
    for (const auto& v : cell.violations) {
      report.violations.push_back(cell.scenario + ": " + v.invariant);
      summary += fmt::format("  {}: {} in {} of {} runs\n", cell.scenario, v.invariant, v.failures, cell.seeds_run);
    }
  }
  const std::string what = fmt::format("{} scenario{} × {} runs (strategy {}, seed {}){}", scenarios.size(),
                                       scenarios.size() == 1 ? "" : "s", options.seeds, m.strategy, options.seed,
                                       engine->is_sqlite() ? "" : " on " + engine->cell_suffix().substr(1));
  report.passed = report.violations.empty();
  if (report.passed) {
    report.message = fmt::format("{}: exactly once on {}", handler.name, what);
    return report;
  }
  report.message = fmt::format("{} is not exactly-once: {} violation{} on {}\n{}", handler.name,
                               report.violations.size(), report.violations.size() == 1 ? "" : "s", what, summary) +
                   render_failures(m.cells, options) + replay_hint(options);
  return report;
}

Report check_run(std::string_view handler, const Run& run, const Options& options) {
  const HandlerInfo* h = HandlerRegistry::instance().find(handler);
  if (!h) return failed(fmt::format("no handler registered as '{}' in this program", handler));
  return check_run(*h, run, options);
}

Report check_run(const HandlerInfo& handler, const Run& run, const Options& options) {
  if (Status bad = check_options(options); !bad.ok()) return failed(bad.message());
  StatusOr<engine::EngineChoice> engine = engine_of(options);
  if (!engine.ok()) return failed(engine.status().message());
  StatusOr<gateway::Scenario> loaded = gateway::load_scenario_ref(run.scenario, options.bundled_dir);
  if (!loaded.ok()) return failed(loaded.status().message());
  const gateway::Scenario& scenario = *loaded;
  const sim::StrategySpec strategy = strategy_of(options);
  StatusOr<run::RunResult> guarded = run_guarded(scenario, handler, strategy, run.seed, *engine);
  if (!guarded.ok()) return failed(guarded.status().message());
  const run::RunResult& r = *guarded;

  Report report;
  report.runs = 1;
  report.passed = r.verdict.violations.empty();
  if (report.passed) {
    report.message = fmt::format("{}: exactly once on {} seed {}", handler.name, scenario.name, run.seed);
    return report;
  }
  // The shape check_exactly_once() reports in: one cell of one run.
  std::vector<explore::CellResult> cells(1);
  explore::CellResult& cell = cells.front();
  cell.handler = handler.name;
  cell.scenario = scenario.name + engine->cell_suffix();
  cell.strategy = sim::strategy_name(strategy);
  cell.seeds_run = 1;
  cell.failing_runs = 1;
  for (const auto& v : r.verdict.violations) {
    const bool seen = std::any_of(cell.violations.begin(), cell.violations.end(),
                                  [&](const explore::ViolationResult& x) { return x.invariant == v.invariant; });
    if (seen) continue;
    explore::ViolationResult vr;
    vr.invariant = v.invariant;
    vr.subject = v.subject;
    vr.detail = v.detail;
    vr.failures = 1;
    vr.schedules_to_first = 1;
    vr.seed = run.seed;
    vr.counterexample = explore::shrink_counterexample(scenario, handler, strategy, run.seed, v.invariant,
                                                       options.shrink_budget, *engine);
    cell.violations.push_back(std::move(vr));
    report.violations.push_back(cell.scenario + ": " + v.invariant);
  }
  report.message = fmt::format("{} is not exactly-once on {} seed {}\n", handler.name, cell.scenario, run.seed) +
                   render_failures(cells, options) + replay_hint(options);
  return report;
}

}  // namespace twice::testing
