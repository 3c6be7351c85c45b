// check_exactly_once() and check_run(): the explorer and the text report, put
// behind the small public API of twice/testing.h.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "explore/cell_process.h"
#include "explore/explorer.h"
#include "gateway/scenario_digest.h"
#include "gateway/scenario_ref.h"
#include "reports/cell_verdict.h"
#include "reports/escape.h"
#include "reports/text_report.h"
#include "run/simulate.h"
#include "testing/engine_servers.h"
#include "testing/scenario_selection.h"
#include "twice/testing.h"

namespace fs = std::filesystem;

// The jobs the bundled scenarios switch on, compiled into this library
// (harness/testing/CMakeLists.txt): named here, so that a test program links
// them, and their registrations, from it.
namespace twice::impl {
extern const int kReconcilerLinked;
extern const int kOrderCloserLinked;
}  // namespace twice::impl

namespace twice::testing {

// Not static: the compiler keeps it, and with it the names above.
int scenario_jobs_linked() { return impl::kReconcilerLinked + impl::kOrderCloserLinked; }

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
  if (o.hang_seconds < 1 || o.hang_seconds > 86'400)
    return Status::error(fmt::format("Options::hang_seconds is {}; allowed: 1 to 86400", o.hang_seconds));
  if (Status bad = check_scenario_folders(o); !bad.ok()) return bad;
  return check_skip(o);
}

sim::StrategySpec strategy_of(const Options& o) {
  sim::StrategySpec s;
  s.kind = o.strategy == "pct" ? sim::StrategyKind::kPct : sim::StrategyKind::kRandom;
  s.pct_depth = o.pct_depth;
  return s;
}

// The file a scenario reference names (a bundled one's is in bundled_dir).
fs::path file_of(const std::string& ref, const Options& o) {
  std::error_code ec;
  const fs::path p = gateway::is_scenario_name(ref) ? fs::path(o.bundled_dir) / (ref + ".toml") : fs::path(ref);
  return fs::weakly_canonical(p, ec);
}

StatusOr<std::vector<gateway::Scenario>> load_all(const std::vector<std::string>& refs, const Options& o) {
  std::vector<gateway::Scenario> out;
  std::map<std::string, std::string> given_as;  // a scenario's name -> the reference that named it
  for (const auto& ref : refs) {
    StatusOr<gateway::Scenario> s = gateway::load_scenario_ref(ref, o.bundled_dir);
    if (!s.ok()) return s.status();
    // A result is known by its scenario's name: two scenarios of one name
    // would show one's violations as the other's.
    if (auto [it, fresh] = given_as.emplace(s->name, ref); !fresh) {
      if (file_of(it->second, o) == file_of(ref, o)) continue;  // one file, named two ways: once
      if (gateway::is_scenario_name(it->second))
        return Status::error(fmt::format(
            "Options::scenarios: '{}' is named '{}', as a bundled scenario is (a result is known by its scenario "
            "file's name): rename the file, or leave the bundled one out with Options::skip = {{\"{}\"}}",
            ref, s->name, s->name));
      return Status::error(fmt::format("Options::scenarios: '{}' and '{}' are both named '{}' (a result is known by "
                                       "its scenario file's name): rename one of the files",
                                       it->second, ref, s->name));
    }
    out.push_back(std::move(s).value());
  }
  return out;
}

// Advice for a run that could not start on a bundled scenario whose merchant
// jobs (the reconciler, the order closer) query the reference schema, which a
// handler with its own schema does not have. An error in the handler's own
// schema or jobs is the handler's to fix, not a scenario to skip.
std::string skip_hint(const gateway::Scenario& scenario, std::string_view error) {
  constexpr std::string_view kNoJob = "no job registered as ";
  if (error.starts_with(kNoJob)) {
    const std::string_view job = error.substr(kNoJob.size());
    if (job != "reconciler" && job != "order-closer")
      return " (the handler's jobs() names it: register the job with TWICE_REGISTER_JOB, or correct the name)";
  }
  const bool reference_jobs = scenario.reconciler || scenario.close_after > 0;
  if (!scenario.source.empty() || !reference_jobs || error.starts_with("the handler's schema")) return "";
  return fmt::format(" (if your handler is not meant for {0}, leave it out: Options::skip = {{\"{0}\"}})",
                     scenario.name);
}

// The plugin as the replay commands name it: a relative path that names a
// file from here is made absolute, as a scenario's is, so that the commands
// work pasted in any folder; one that names none (a test that ctest runs in
// another folder) is left as given.
std::string plugin_as_shown(const std::string& plugin) {
  std::error_code ec;
  if (plugin.empty() || !fs::path(plugin).is_relative() || !fs::is_regular_file(plugin, ec)) return plugin;
  const fs::path absolute = fs::absolute(plugin, ec);
  return ec ? plugin : absolute.lexically_normal().string();
}

std::string replay_hint(const Options& o) {
  if (!o.plugin.empty()) return "";
  return "\n(`twice replay` runs a handler it can load: build yours as a plugin (twice::plugin) and add "
         "--plugin path/to/libyours.so, or set Options::plugin to have it printed above.)\n";
}

// The rendered counterexamples of the cells that failed, and what became of
// the cells that did not finish, with the plugin in their replay commands.
std::string render_failures(std::vector<explore::CellResult>& cells, const Options& o) {
  reports::TextOptions text;
  const std::string plugin = plugin_as_shown(o.plugin);
  std::string out;
  for (auto& cell : cells) {
    for (auto& v : cell.violations) {
      explore::add_plugin_to_replay(v.counterexample.replay_command, plugin);
      explore::add_plugin_to_replay(v.counterexample.replay_shrunk_command, plugin);
      out += "\n" + reports::render_counterexample(cell, v, reports::fitted_to_width(v.counterexample, text));
    }
    for (auto& f : cell.failures) {
      explore::add_plugin_to_replay(f.replay_command, plugin);
      out += "\n" + reports::render_failure(cell, f, text);
    }
  }
  return out;
}

// "; ran on the postgres server 15.14 (...), started by twice" ("..., at
// postgresql://app@db/pay" on Options::engine_url, without its password): the
// server a verdict came from, since another server or version can tell
// another story. "" on SQLite.
std::string server_clause(const engine::EngineChoice& engine) {
  const std::optional<results::EngineServer> server = explore::engine_server(engine);
  if (!server) return "";
  return "; ran on the " +
         reports::server_sentence(*server, [](std::string_view s) { return reports::terminal_text(s); });
}

// Whether this process runs no thread but the caller's (Options::contain).
bool only_thread() {
  std::error_code ec;
  int threads = 0;
  for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++threads;
  return !ec && threads == 1;
}

// The handler whose check runs in this process while Options::contain asked
// for child processes (or with it off): an exit() from it would end the test
// program, with its status (0: green). Set only while such a check runs.
std::atomic<const char*> g_uncontained_handler{nullptr};

extern "C" void on_exit_during_uncontained_check() {
  const char* handler = g_uncontained_handler.load();
  if (!handler) return;
  const std::string line = fmt::format(
      "\ntwice: exit() was called during the uncontained check of {} (Report::contained is false): the test program "
      "ends with status 1, not with the status given, so that it cannot end green\n",
      handler);
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, line.data(), line.size());
  ::_exit(1);
}

// Marks an uncontained check for its lifetime (one at a time: the test API
// is called from one thread).
class UncontainedCheck {
 public:
  explicit UncontainedCheck(const HandlerInfo& handler) {
    static const bool registered = std::atexit(on_exit_during_uncontained_check) == 0;
    if (registered) g_uncontained_handler = handler.name.c_str();
  }
  ~UncontainedCheck() { g_uncontained_handler = nullptr; }
  UncontainedCheck(const UncontainedCheck&) = delete;
  UncontainedCheck& operator=(const UncontainedCheck&) = delete;
};

// Why a check that asks to be contained (Options::contain) cannot be: "; not
// contained: ..." for its message, or "" when it can (or did not ask).
std::string why_not_contained(const Options& o, const engine::EngineChoice& engine) {
  if (!o.contain) return "";
  if (!engine.is_sqlite()) return "; not contained: a server engine's runs share this process's connections";
  if (!only_thread()) return "; not contained: this program runs other threads, which a fork would not copy";
  return "";
}

// Explores the cells of one handler, in child processes when `contained`,
// else in this process.
explore::MatrixResult explore_cells(const HandlerInfo& handler, const std::vector<gateway::Scenario>& scenarios,
                                    const explore::ExploreOptions& explore, const Options& o, bool contained) {
  // No expected matrix: a handler under test is held to exactly-once everywhere.
  if (!contained) {
    const UncontainedCheck guard(handler);
    return explore::explore_matrix({&handler}, scenarios, explore, explore::ExpectedMatrix{});
  }
  explore::IsolationLimits limits;
  limits.timeout_seconds = o.hang_seconds;
  return explore::explore_matrix_isolated({&handler}, scenarios, explore, limits, explore::ExpectedMatrix{});
}

// A cell whose first run stopped on an error (a schema the database rejects,
// a job nobody registered): the handler could not be checked there at all.
std::optional<std::string> could_not_start(const explore::CellResult& cell, const gateway::Scenario& scenario) {
  for (const auto& f : cell.failures) {
    constexpr std::string_view kError = "error: ";
    if (!f.verdict.starts_with(kError) || f.run > 1 || (f.run == 1 && f.phase != "exploring")) continue;
    const std::string error = f.verdict.substr(kError.size());
    return fmt::format("{} on {}: the run could not start: {}{}", cell.handler, scenario.name, error,
                       skip_hint(scenario, error));
  }
  return std::nullopt;
}

// What the handler left running, killed when each scenario's runs ended:
// "; the handler left 2 processes running when their scenarios ended
// (concurrent-duplicates 1, sequential-duplicates 1); twice killed them", or
// "" when it left none. Counts them into `report`.
std::string processes_left(const std::vector<explore::CellResult>& cells, Report& report) {
  std::vector<std::string> where;
  for (const auto& cell : cells) {
    if (cell.processes_left <= 0) continue;
    report.processes_left += cell.processes_left;
    where.push_back(fmt::format("{} {}", cell.scenario, cell.processes_left));
  }
  const int n = report.processes_left;
  if (n == 0) return "";
  return fmt::format("; the handler left {} process{} running when {} scenario{} ended ({}); twice killed {}", n,
                     n == 1 ? "" : "es", where.size() == 1 ? "its" : "their", where.size() == 1 ? "" : "s",
                     fmt::join(where, ", "), n == 1 ? "it" : "them");
}

// A name no handler is registered as, with those that are and the fix.
std::string unknown_handler(std::string_view handler) {
  std::string names;
  for (const auto* x : HandlerRegistry::instance().all()) names += (names.empty() ? "" : ", ") + x->name;
  return fmt::format("no handler registered as '{}' in this program (registered: {}); register it with "
                     "TWICE_REGISTER_HANDLER in a .cpp file linked into the test",
                     handler, names.empty() ? "none" : names);
}

}  // namespace

Report check_exactly_once(std::string_view handler, const Options& options) {
  const HandlerInfo* h = HandlerRegistry::instance().find(handler);
  if (!h) return failed(unknown_handler(handler));
  return check_exactly_once(*h, options);
}

Report check_exactly_once(const HandlerInfo& handler, const Options& options) {
  if (Status bad = check_options(options); !bad.ok()) return failed(bad.message());
  StatusOr<engine::EngineChoice> engine = engine_of(options);
  if (!engine.ok()) return failed(engine.status().message());
  const std::vector<std::string> refs = scenario_refs(options);
  if (refs.empty())
    return failed(options.bundled ? "no scenarios: Options::skip leaves out every bundled scenario, and "
                                    "Options::scenarios is empty"
                                  : "no scenarios: Options::bundled is false and Options::scenarios is empty");
  StatusOr<std::vector<gateway::Scenario>> loaded = load_all(refs, options);
  if (!loaded.ok()) return failed(loaded.status().message());
  const std::vector<gateway::Scenario>& scenarios = *loaded;

  explore::ExploreOptions explore;
  explore.seeds = options.seeds;
  explore.base_seed = options.seed;
  explore.strategy = strategy_of(options);
  explore.shrink = options.shrink_budget > 0;
  explore.shrink_budget = options.shrink_budget;
  explore.jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  explore.engine = *engine;
  const std::string not_contained = why_not_contained(options, *engine);
  const bool contained = options.contain && not_contained.empty();
  explore::MatrixResult m = explore_cells(handler, scenarios, explore, options, contained);

  // A scenario the handler could not be checked on at all is said first; the
  // other scenarios' violations still follow (they hid behind it).
  std::string cannot;
  std::vector<std::string> not_started;
  for (std::size_t i = 0; i < m.cells.size(); ++i)
    if (std::optional<std::string> why = could_not_start(m.cells[i], scenarios[i])) {
      cannot += *why + "\n";
      not_started.push_back(scenarios[i].name);
      m.cells[i].failures.clear();
      m.cells[i].violations.clear();
    }
  if (not_started.size() == m.cells.size()) return failed(cannot.substr(0, cannot.size() - 1));

  Report report;
  report.contained = contained;
  const std::string left = processes_left(m.cells, report);
  std::string summary;
  int unfinished = 0, unreplayable = 0;
  for (const auto& cell : m.cells) {
    report.runs += cell.seeds_run;
    for (const auto& v : cell.violations) {
      report.violations.push_back(cell.scenario + ": " + v.invariant);
      summary += fmt::format("  {}: {} in {} of {} runs\n", cell.scenario, v.invariant, v.failures, cell.seeds_run);
    }
    for (const auto& f : cell.failures) {
      report.violations.push_back(cell.scenario + ": " + f.verdict);
      summary += fmt::format("  {}: {}\n", cell.scenario, f.verdict);
      // A violation a fresh process did not show again is a finding about
      // the handler, not a scenario that did not finish.
      if (explore::not_shown_again(f)) ++unreplayable;
      else ++unfinished;
    }
  }
  const int violations = static_cast<int>(report.violations.size()) - unfinished - unreplayable;
  for (const auto& name : not_started) report.violations.push_back(name + ": could not start");
  const std::string what = fmt::format("{} scenario{} × {} runs (strategy {}, seed {}){}", scenarios.size(),
                                       scenarios.size() == 1 ? "" : "s", options.seeds, m.strategy, options.seed,
                                       engine->is_sqlite() ? "" : " on " + engine->cell_suffix().substr(1)) +
                           server_clause(*engine);
  report.passed = report.violations.empty();
  if (report.passed) {
    report.message = fmt::format("{}: exactly once on {}{}{}", handler.name, what, left, not_contained);
    return report;
  }
  std::vector<std::string> counts;
  if (violations > 0) counts.push_back(fmt::format("{} violation{}", violations, violations == 1 ? "" : "s"));
  if (unfinished > 0)
    counts.push_back(fmt::format("{} scenario{} that did not finish", unfinished, unfinished == 1 ? "" : "s"));
  if (unreplayable > 0)
    counts.push_back(fmt::format("{} violation{} that a fresh process did not show again", unreplayable,
                                 unreplayable == 1 ? "" : "s"));
  if (!not_started.empty())
    counts.push_back(fmt::format("{} scenario{} it could not be checked on", not_started.size(),
                                 not_started.size() == 1 ? "" : "s"));
  report.message = fmt::format("{} is not exactly-once: {} on {}{}{}\n{}{}", handler.name,
                               fmt::join(counts, " and "), what, left, not_contained, cannot, summary) +
                   render_failures(m.cells, options) + replay_hint(options);
  return report;
}

Report check_run(std::string_view handler, const Run& run, const Options& options) {
  const HandlerInfo* h = HandlerRegistry::instance().find(handler);
  if (!h) return failed(unknown_handler(handler));
  return check_run(*h, run, options);
}

Report check_run(const HandlerInfo& handler, const Run& run, const Options& options) {
  if (Status bad = check_options(options); !bad.ok()) return failed(bad.message());
  StatusOr<engine::EngineChoice> engine = engine_of(options);
  if (!engine.ok()) return failed(engine.status().message());
  StatusOr<gateway::Scenario> loaded = gateway::load_scenario_ref(run.scenario, options.bundled_dir);
  if (!loaded.ok()) return failed(loaded.status().message());
  const gateway::Scenario& scenario = *loaded;
  if (Status st = gateway::check_scenario_digest(gateway::scenario_ref_file(run.scenario, options.bundled_dir),
                                                 scenario.digest, run.scenario_digest, "Run::scenario_digest",
                                                 "clear Run::scenario_digest");
      !st.ok())
    return failed(st.message());

  explore::ExploreOptions explore;
  explore.only_seed = run.seed;
  explore.strategy = strategy_of(options);
  explore.shrink = options.shrink_budget > 0;
  explore.shrink_budget = options.shrink_budget;
  explore.jobs = 1;
  explore.engine = *engine;
  const std::string not_contained = why_not_contained(options, *engine);
  const bool contained = options.contain && not_contained.empty();
  explore::MatrixResult m = explore_cells(handler, {scenario}, explore, options, contained);
  if (m.cells.empty()) return failed(fmt::format("{} on {} seed {}: the run did not end", handler.name, scenario.name, run.seed));
  if (std::optional<std::string> why = could_not_start(m.cells.front(), scenario)) return failed(*why);

  Report report;
  report.contained = contained;
  report.runs = 1;
  const std::string left = processes_left(m.cells, report);
  const explore::CellResult& cell = m.cells.front();
  for (const auto& v : cell.violations) report.violations.push_back(cell.scenario + ": " + v.invariant);
  for (const auto& f : cell.failures) report.violations.push_back(cell.scenario + ": " + f.verdict);
  report.passed = report.violations.empty();
  if (report.passed) {
    report.message = fmt::format("{}: exactly once on {} seed {}{}{}{}", handler.name, cell.scenario, run.seed,
                                 server_clause(*engine), left, not_contained);
    return report;
  }
  report.message = fmt::format("{} is not exactly-once on {} seed {}{}{}{}\n", handler.name, cell.scenario, run.seed,
                               server_clause(*engine), left, not_contained) +
                   render_failures(m.cells, options) + replay_hint(options);
  return report;
}

}  // namespace twice::testing
