// The `twice` command: run the matrix, replay one run, list what there is.
// Exit status: 0 the matrix equals scenarios/expected.toml (replay: the run
// shows no violation), 1 it does not (replay: it shows one, or the handler
// crashed, exited or hung in it), 2 a usage or
// input error (the message names the file, line and fix), 3 an internal
// error of twice itself, 130 interrupted.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <map>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "check/violation.h"
#include "cli/argument_checks.h"
#include "cli/blackbox_command.h"
#include "cli/engine_options.h"
#include "cli/exit_status.h"
#include "cli/help_format.h"
#include "cli/plugin_loader.h"
#include "cli/progress.h"
#include "cli/stop_lines.h"
#include "cli/stop_signal.h"
#include "cli/list_json.h"
#include "cli/stress_command.h"
#include "engine/engine_url.h"
#include "explore/expected.h"
#include "explore/cell_process.h"
#include "explore/contained_process.h"
#include "explore/explorer.h"
#include "explore/schedule_text.h"
#include "process/child_io.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario.h"
#include "gateway/scenario_digest.h"
#include "gateway/scenario_profile.h"
#include "gateway/scenario_ref.h"
#include "reports/cell_verdict.h"
#include "reports/escape.h"
#include "reports/json_report.h"
#include "reports/report_dir.h"
#include "reports/text_report.h"
#include "run/simulate.h"
#include "sim/trace.h"
#include "twice/handler.h"
#include "twice/job.h"
#include "twice/version.h"
#include "twice_tool_version.h"

namespace fs = std::filesystem;
using namespace twice;

namespace {

constexpr int kExitMismatch = 1;
using cli::kExitInternal;
using cli::kExitInterrupted;
using cli::kExitUsage;

std::atomic<bool> g_stop{false};
// A second stop came: the cells under way are killed or end between two runs.
// It counts the cells started and finished (process/stop_now.h): a stop says
// exactly what it keeps and drops.
process::StopNow g_stop_now;
// The progress line is being rewritten on a terminal: a message must clear it first.
std::atomic<bool> g_progress_on_tty{false};
// The first Ctrl-C lets the cells under way finish and writes what is done.
// A second one, for a person who will not wait, kills the cells under way
// (their process groups and database files; the cells in this process end
// between two runs) and still writes the finished ones; the main thread does
// that, within kStopNowSeconds (an alarm) or twice stops at once. A third
// stops at once (the default action). SIGTERM (a cancelled CI job, `timeout`)
// is taken the same way, so a cancelled run still leaves its finished cells
// and drops the databases it made on a server. Only async-signal-safe calls
// here.
//
// Stopping at once ends the contained processes first (the cells' and a
// replay's: their process groups, and their database files), which the
// terminal's Ctrl-C does not reach, then twice by the signal's default action.
extern "C" void on_stop_now(int sig) {
  explore::stop_contained_now();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

cli::StopCount g_stops;  // cli/stop_signal.h
// After a second stop, how long twice may take to end the cells under way and
// write the finished ones (a report folder on a dead network mount would
// take for ever); then it stops at once. $TWICE_STOP_NOW_SECONDS, read at start.
constexpr unsigned kStopNowSeconds = 30;
unsigned g_stop_now_seconds = kStopNowSeconds;
std::atomic<int> g_stop_now_signal{SIGINT};  // the second stop's signal, which the alarm ends twice by

// The alarm a second stop set went off: the finished cells are not written yet.
extern "C" void on_stop_now_overdue(int) {
  cli::say_writing_overdue(g_stop_now_seconds);
  on_stop_now(g_stop_now_signal.load());
}

extern "C" void on_sigint(int sig) {
  const cli::StopSignal kind = cli::classify_stop(g_stop, g_stops);
  if (kind == cli::StopSignal::kRepeat) return;  // `timeout`'s second copy of the last
  if (kind == cli::StopSignal::kLater) {
    cli::say_dropped(g_stop_now.now().finished, "cell");
    on_stop_now(sig);
    return;
  }
  if (kind == cli::StopSignal::kSecond) {
    g_stop_now_signal = sig;
    const process::StopNow::Counts counts = g_stop_now.stop();
    explore::kill_contained_now();
    std::signal(SIGALRM, on_stop_now_overdue);
    ::alarm(g_stop_now_seconds);
    cli::say_stopping_now(counts, "cell", sig, g_progress_on_tty.load());
    return;
  }
  static constexpr char kClear[] = "\r\x1b[K";
  static constexpr char kSay[] =
      "twice: stopping after the cells under way, each at the end of its current run; what they found will be "
      "written (Ctrl-C again to stop now)\n";
  static constexpr char kSayTerm[] =
      "twice: terminated: stopping after the cells under way, each at the end of its current run; what they found "
      "will be written\n";
  if (g_progress_on_tty.load()) {
    [[maybe_unused]] const auto c = ::write(STDERR_FILENO, kClear, sizeof kClear - 1);
  } else {
    [[maybe_unused]] const auto c = ::write(STDERR_FILENO, "\n", 1);
  }
  if (sig == SIGTERM) {
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSayTerm, sizeof kSayTerm - 1);
  } else {
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSay, sizeof kSay - 1);
  }
}

struct UsageError {
  std::string message;
};

// The bundled scenarios: ./scenarios when run from a checkout,
// <prefix>/share/twice/scenarios when installed, else the source tree this
// binary was built from.
std::string default_scenarios_dir() {
  if (fs::exists("scenarios/expected.toml")) return "scenarios";
  std::error_code ec;
  const fs::path prefix = fs::read_symlink("/proc/self/exe", ec).parent_path().parent_path();
  if (!ec && fs::exists(prefix / "share/twice/scenarios/expected.toml")) return (prefix / "share/twice/scenarios").string();
  return std::string(TWICE_SOURCE_DIR) + "/scenarios";
}

// The scenarios `wanted` names (all of `dir`'s when none). A scenario named by
// name from the default folder keeps no source, so that its replay commands
// name it by name; from a folder given with --scenarios-dir (`own_dir`), it is
// named by its file's path, so that they replay that file and not the bundled
// scenario of the same name.
std::vector<gateway::Scenario> load_scenarios(const std::string& dir, const std::vector<std::string>& wanted,
                                              bool own_dir = false) {
  const auto name_by_path = [&](gateway::Scenario& s) {
    if (own_dir) s.source = (fs::path(dir) / (s.name + ".toml")).string();
  };
  if (wanted.empty()) {
    StatusOr<std::vector<gateway::Scenario>> all = gateway::load_scenario_dir(dir);
    if (!all.ok()) throw UsageError{all.status().message()};
    for (auto& s : *all) {
      s.source.clear();  // bundled: named by name
      name_by_path(s);
    }
    if (all->empty()) throw UsageError{fmt::format("{}: no scenario files (*.toml) found", dir)};
    return std::move(all).value();
  }
  std::vector<gateway::Scenario> out;
  std::map<std::string, std::string> given_as;  // a scenario's name -> the --scenario that named it
  for (const auto& w : wanted) {
    StatusOr<gateway::Scenario> s = gateway::load_scenario_ref(w, dir);
    if (!s.ok()) throw UsageError{s.status().message()};
    if (gateway::is_scenario_name(w)) name_by_path(*s);
    // A cell, its expectation and every report know a scenario by its name:
    // two scenarios of one name would show one's verdict as the other's.
    if (auto [it, fresh] = given_as.emplace(s->name, w); !fresh) {
      // A bundled scenario's source is empty (named by name): its file is in `dir`.
      const auto file_of = [&](const std::string& ref) {
        std::error_code ec;
        return fs::weakly_canonical(gateway::scenario_ref_file(ref, dir), ec);
      };
      if (it->second == w) throw UsageError{fmt::format("--scenario names '{}' twice; give each scenario once", w)};
      if (file_of(it->second) == file_of(w))
        throw UsageError{fmt::format("--scenario '{}' and '{}' are the same file; give it once", it->second, w)};
      throw UsageError{fmt::format("--scenario '{}' and '{}' are both named '{}' (a cell is known by its scenario "
                                   "file's name): rename one of the files",
                                   it->second, w, s->name)};
    }
    out.push_back(std::move(s).value());
  }
  return out;
}

std::vector<const HandlerInfo*> find_handlers(const std::vector<std::string>& wanted) {
  const auto& registry = HandlerRegistry::instance();
  if (wanted.empty()) return registry.all();
  std::vector<const HandlerInfo*> out;
  for (const auto& w : wanted) {
    const HandlerInfo* h = registry.find(w);
    if (!h) {
      std::string names;
      for (const auto* x : registry.all()) names += (names.empty() ? "" : ", ") + x->name;
      throw UsageError{fmt::format("unknown handler '{}'; known: {} (see `twice list`; a handler of your own needs "
                                   "--plugin path/to/libyours.so)",
                                   w, names)};
    }
    if (std::find(out.begin(), out.end(), h) != out.end())
      throw UsageError{fmt::format("--handler names '{}' twice; give each handler once", w)};
    out.push_back(h);
  }
  return out;
}

// A path as the reports should show it: relative to the current directory when
// it lies under it (so a checkout reads "scenarios/expected.toml"), else absolute.
std::string shown_path(const std::string& path) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return path;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec) return path;
  const auto under_cwd = [&](const fs::path& p) -> std::optional<fs::path> {
    const fs::path rel = p.lexically_relative(cwd);
    if (rel.empty() || rel == "." || *rel.begin() == "..") return std::nullopt;
    return rel;
  };
  if (auto rel = under_cwd(absolute)) return rel->string();
  // The current directory has its symlinks resolved; resolve the path's too.
  if (const fs::path real = fs::weakly_canonical(absolute, ec); !ec)
    if (auto rel = under_cwd(real)) return rel->string();
  return absolute.string();
}

sim::StrategySpec strategy_from(const std::string& name, int depth, int steps) {
  sim::StrategySpec s;
  s.kind = name == "pct"          ? sim::StrategyKind::kPct
           : name == "exhaustive" ? sim::StrategyKind::kExhaustive
                                  : sim::StrategyKind::kRandom;
  s.pct_depth = depth;
  s.pct_max_steps = steps;  // 0: measured per cell (explore::resolve_strategy)
  return s;
}

// The scenarios an expected matrix may name: this run's, every file in the
// scenarios folder, and a project's own: the files beside the expected matrix
// or in a folder directly inside its folder (tests/expected.toml lists
// tests/scenarios/double-pay.toml), and beside this run's --scenario paths. So
// a project's own file serves a run narrowed to some of its cells; a cell of a
// scenario not in the run is not judged. A name none of these has is a typo.
std::vector<std::string> known_scenario_names(const std::vector<gateway::Scenario>& scenarios, const std::string& dir,
                                              const std::string& expected_path) {
  std::vector<std::string> names;
  for (const auto& sc : scenarios) names.push_back(sc.name);
  std::vector<fs::path> folders = {dir};
  const fs::path beside = fs::path(expected_path).parent_path().empty() ? fs::path(".") : fs::path(expected_path).parent_path();
  folders.push_back(beside);
  std::error_code ec;
  for (fs::directory_iterator it(beside, ec), end; !ec && it != end; it.increment(ec))
    if (std::error_code dir_ec; it->is_directory(dir_ec)) folders.push_back(it->path());
  for (const auto& sc : scenarios)
    if (!sc.source.empty()) folders.push_back(fs::path(sc.source).parent_path().empty() ? fs::path(".")
                                                                                          : fs::path(sc.source).parent_path());
  // An unreadable folder adds no names.
  for (const auto& folder : folders)
    if (StatusOr<std::vector<std::string>> paths = gateway::scenario_files(folder.string()); paths.ok())
      for (const auto& path : *paths) names.push_back(fs::path(path).stem().string());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Every handler must bring its tables in each engine's dialect; say which
// does not before any run starts.
void require_schemas(const std::vector<const HandlerInfo*>& handlers, const cli::EngineSelection& engines) {
  for (const auto& choice : engines.choices()) {
    for (const auto* h : handlers) {
      if (!h->make()->schema().setup_sql_for(choice.engine).empty()) continue;
      throw UsageError{fmt::format("handler {} has no schema for {} (Schema::{}_setup_sql); run it with --engine sqlite",
                                   h->name, engine_name(choice.engine), engine_name(choice.engine))};
    }
  }
}

struct RunArgs {
  std::vector<std::string> handlers;
  std::vector<std::string> scenarios;
  int seeds = 100;
  std::string strategy = "random";
  int pct_depth = 2;
  int pct_steps = 0;
  std::string preemption_bound = "2";  // --strategy exhaustive: a number or "none"
  int max_faults = 1;
  long budget = 0;
  std::string reduction = "sleep-sets";
  bool coverage = false;
  bool prove = false;  // the exhaustive strategy on the handlers expected to pass (README: --prove)
  bool bounds_given = false;  // --preemption-bound or --max-faults on the command line
  std::uint64_t seed = 1;
  std::string json;
  std::string scenarios_dir;
  std::string expected;
  int jobs = 0;
  int shrink_budget = 500;
  bool reconciler = false;
  bool quiet = false;
  cli::ColorMode color = cli::ColorMode::kAuto;
  bool show_all = false;
  std::string report_dir;            // empty: twice-report/ for the full matrix, else none
  std::vector<std::string> formats;  // empty: all
  bool no_report = false;
  bool in_process = false;
  int cell_timeout = explore::IsolationLimits{}.timeout_seconds;
  int cell_memory_mib = 0;
  cli::EngineArgs engines;
  std::map<std::string, std::string> plugin_of;  // handler -> the --plugin it came from
};

// Fails before the run, not after it: a report folder (created if missing) or
// the folder of a --json file that cannot be written to. A file is made and
// removed there, which answers for permissions, read-only mounts and root alike.
void check_writable_folder(const std::string& folder, const std::string& what) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw UsageError{fmt::format("{}: cannot create the {}: {}", folder, what, ec.message())};
  std::string probe = (fs::path(folder) / ".twice-write-test-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw UsageError{fmt::format("{}: cannot write into the {}: {}; choose another folder", folder, what,
                                 std::strerror(errno))};
  ::close(fd);
  ::unlink(probe.c_str());
}

// Fails before the run: a report file's path taken by something that is not a
// file (a folder named twice-report.md), which the writer could not replace.
void check_replaceable_file(const std::string& path, const std::string& what) {
  if (Status s = cli::check_replaceable_file(path, what); !s.ok()) throw UsageError{s.message()};
}

// A handler from a plugin replays only in a twice that loads the plugin: its
// replay commands say --plugin, so that they work as printed.
void add_plugins_to_replays(explore::MatrixResult& m, const std::map<std::string, std::string>& plugin_of) {
  for (auto& cell : m.cells) {
    const auto it = plugin_of.find(cell.handler);
    if (it == plugin_of.end()) continue;
    for (auto& v : cell.violations) {
      explore::add_plugin_to_replay(v.counterexample.replay_command, it->second);
      explore::add_plugin_to_replay(v.counterexample.replay_shrunk_command, it->second);
    }
    for (auto& f : cell.failures) explore::add_plugin_to_replay(f.replay_command, it->second);
  }
}

// One run for `twice replay`; a run that cannot start (a schema the database
// refuses) is the user's to fix: one line, exit 2.
run::RunResult replayed(const run::RunSpec& spec) {
  StatusOr<run::RunResult> r = run::simulate(spec);
  if (!r.ok()) throw UsageError{fmt::format("the run could not start: {}", r.status().message())};
  return std::move(r).value();
}

int cmd_run(const RunArgs& a) {
  const std::string dir = a.scenarios_dir.empty() ? default_scenarios_dir() : a.scenarios_dir;
  auto handlers = find_handlers(a.handlers);
  auto scenarios = load_scenarios(dir, a.scenarios, !a.scenarios_dir.empty());
  // Replay commands carry --reconciler where the file has none of its own.
  if (a.reconciler)
    for (auto& s : scenarios) {
      s.reconciler_from_option = !s.reconciler;
      s.reconciler = true;
    }
  explore::ExpectedMatrix expected;
  const std::string expected_path = a.expected.empty() ? dir + "/expected.toml" : a.expected;
  std::error_code ec;
  const fs::file_status expected_status = fs::status(expected_path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)  // ELOOP, EACCES: not "no such file"
    throw UsageError{fmt::format("{}: cannot read the expected matrix: {}", expected_path, ec.message())};
  if (!a.expected.empty() && !fs::exists(expected_status))
    throw UsageError{fmt::format("--expected {}: no such file; name the expected matrix (docs/scenarios.md) or leave "
                                 "--expected out",
                                 expected_path)};
  if (fs::exists(expected_status) && !fs::is_regular_file(expected_status))
    throw UsageError{fmt::format("{}: not a file; the expected matrix is a TOML file (docs/scenarios.md)", expected_path)};
  if (fs::exists(expected_status)) {
    StatusOr<explore::ExpectedMatrix> loaded = explore::ExpectedMatrix::load(expected_path);
    if (!loaded.ok()) throw UsageError{loaded.status().message()};
    expected = std::move(loaded).value();
    std::vector<std::string> handler_names;
    for (const auto* h : HandlerRegistry::instance().all()) handler_names.push_back(h->name);
    if (Status st = expected.check_names(handler_names, known_scenario_names(scenarios, dir, expected_path)); !st.ok())
      throw UsageError{st.message()};
  }
  // A scenario file of one's own outside the scenarios folder is not judged
  // by that folder's expected matrix, even under a bundled scenario's name:
  // those cells describe another file, and would show the file's double
  // credit as "expected". Without --expected its cells are expected to pass;
  // said when the matrix named them, or when an expected.toml lies beside it.
  std::vector<std::string> not_judged;
  if (a.expected.empty()) {
    std::error_code e1, e2;
    const fs::path folder = fs::weakly_canonical(dir, e1);
    for (const auto& sc : scenarios) {
      if (sc.source.empty()) continue;
      const fs::path file = fs::weakly_canonical(sc.source, e2);
      if (!e1 && !e2 && file.parent_path() == folder) continue;
      const fs::path beside = fs::path(sc.source).parent_path() / "expected.toml";
      std::error_code e3;
      const bool own_beside = fs::is_regular_file(beside, e3);
      if (!expected.names_scenario(sc.name) && !own_beside) continue;
      expected = expected.without_scenario(sc.name);
      not_judged.push_back(fmt::format(
          "twice: {} is not in {}, so {} does not judge it: its cells are expected to pass{}\n", sc.source,
          shown_path(dir), shown_path(expected_path),
          own_beside ? fmt::format(" (--expected {} judges it by the file beside it)", beside.string())
                     : std::string(" (give --expected FILE to judge it)")));
    }
  }
  // With the reconciler, the cells it changes are judged by the file's
  // [reconciler."<handler>"] tables (docs/scenarios.md).
  if (a.reconciler) expected = expected.with_reconciler();

  // The full matrix is the CI job, so it leaves its reports without being asked;
  // a run narrowed to some cells writes them when given a folder or formats.
  std::string report_dir = a.report_dir;
  // --prove: unless named, the handlers the expected matrix says pass every scenario of the run.
  if (a.prove && a.handlers.empty()) {
    std::erase_if(handlers, [&](const HandlerInfo* h) {
      return std::any_of(scenarios.begin(), scenarios.end(),
                         [&](const gateway::Scenario& sc) { return !expected.get(h->name, sc.name).violations.empty(); });
    });
    if (handlers.empty())
      throw UsageError{"--prove: no handler is expected to pass every scenario given; name one with --handler"};
  }
  const bool full_matrix = a.handlers.empty() && a.scenarios.empty() && !a.prove;
  if (report_dir.empty() && !a.no_report && (full_matrix || !a.formats.empty())) report_dir = "twice-report";
  const bool json_to_stdout = a.json == "-";
  if (!a.json.empty() && !json_to_stdout) {
    const fs::path parent = fs::path(a.json).parent_path();
    check_writable_folder(parent.empty() ? "." : parent.string(), "folder of --json " + a.json);
    check_replaceable_file(a.json, "JSON report");
  }
  if (!report_dir.empty()) {
    check_writable_folder(report_dir, "report folder");
    for (const auto& f : a.formats.empty() ? reports::report_formats() : a.formats)
      check_replaceable_file((fs::path(report_dir) / reports::report_file_name(f)).string(), "report");
  }

  explore::ExploreOptions options;
  options.seeds = a.seeds;
  options.base_seed = a.seed;
  options.strategy = strategy_from(a.prove ? "exhaustive" : a.strategy, a.pct_depth, a.pct_steps);
  options.strategy.preemption_bound = a.preemption_bound == "none" ? -1 : std::stoi(a.preemption_bound);
  options.strategy.max_faults = a.max_faults;
  options.budget = a.prove && a.budget == 0 ? 20'000 : a.budget;  // a proof that cannot finish says how far it got
  options.reduce = a.reduction != "none";
  options.bounds_from_expected = a.prove && !a.bounds_given;
  options.prove = a.prove;
  options.coverage = a.coverage;
  options.shrink_budget = a.shrink_budget;
  options.shrink = a.shrink_budget > 0;
  options.jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.stop = &g_stop;
  options.stop_now = &g_stop_now;
  const bool tty = ::isatty(STDERR_FILENO) && !a.quiet;
  g_progress_on_tty = tty;

  cli::EngineSelection engines;
  if (Status st = engines.resolve(a.engines); !st.ok()) throw UsageError{st.message()};
  require_schemas(handlers, engines);
  // Said once every argument has been checked, just before the cells run.
  if (!fs::exists(expected_status))
    std::cerr << fmt::format("twice: no {}: every cell is expected to pass\n", expected_path);
  for (const auto& line : not_judged) std::cerr << line;
  if (const char* seconds = std::getenv("TWICE_STOP_NOW_SECONDS"))
    g_stop_now_seconds = static_cast<unsigned>(std::clamp(std::atoi(seconds), 1, 3600));
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  explore::IsolationLimits limits;
  limits.timeout_seconds = a.cell_timeout;
  limits.memory_limit_bytes = static_cast<std::uint64_t>(a.cell_memory_mib) << 20;
  explore::MatrixResult m;
  const std::size_t parts = engines.choices().size();
  std::size_t part_number = 0;
  for (const auto& choice : engines.choices()) {
    options.engine = choice;
    ++part_number;
    // Which pass of the run a progress line is about, when it is not the one default.
    std::string pass;
    if (parts > 1) pass = fmt::format("{}, {} of {}", choice.is_sqlite() ? "sqlite" : choice.cell_suffix().substr(1),
                                      part_number, parts);
    else if (!choice.is_sqlite()) pass = choice.cell_suffix().substr(1);
    cli::Progress progress(tty, a.quiet, handlers.size(), scenarios.size(), pass);
    if (options.strategy.kind == sim::StrategyKind::kExhaustive) progress.runs_per_cell(static_cast<int>(options.budget), true);
    else progress.runs_per_cell(options.only_seed ? 1 : options.seeds, false);
    options.on_cell = [&progress](const explore::CellResult& c, int done, int total) {
      progress.cell_done(c.handler, c.scenario, c.matched, c.violations.empty() ? "pass" : c.violations.front().invariant,
                         done, total);
    };
    options.on_progress = [&progress](const std::string& handler, const std::string& scenario, std::string_view phase,
                                      int run, double seconds) {
      progress.under_way(handler, scenario, phase, run, seconds);
    };
    // Cells on a server engine run in this process: a forked child would
    // share the parent's connections to the server.
    const bool isolate = !a.in_process && choice.is_sqlite();
    explore::MatrixResult part = isolate
                                     ? explore::explore_matrix_isolated(handlers, scenarios, options, limits, expected)
                                     : explore::explore_matrix(handlers, scenarios, options, expected);
    progress.finish();
    options.on_cell = nullptr;
    options.on_progress = nullptr;
    if (m.handlers.empty()) {
      m = std::move(part);
      continue;
    }
    // One matrix: each engine's scenarios are more columns; cells stay handler-major.
    m.scenarios.insert(m.scenarios.end(), part.scenarios.begin(), part.scenarios.end());
    m.interrupted = m.interrupted || part.interrupted;
    std::vector<explore::CellResult> cells;
    for (const auto& h : m.handlers)
      for (auto* from : {&m.cells, &part.cells})
        for (auto& c : *from)
          if (c.handler == h) cells.push_back(std::move(c));
    m.cells = std::move(cells);
  }
  // With no stop taken, a Ctrl-C from here ends twice at once, as any
  // program's; after one, the next stop is taken as its handler says (a
  // third stops at once).
  if (!g_stop.load()) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  g_progress_on_tty = false;
  add_plugins_to_replays(m, a.plugin_of);
  m.servers = engines.servers();
  // The file read, or, when there was none (every cell then expected to pass), the one looked for.
  m.expected_path = shown_path(expected_path);
  m.expected_found = fs::exists(expected_status);

  // The reports first, so that the text can end with where they are and the
  // verdict. A report that cannot be written (a full disk) does not lose the
  // others, nor the text: it is said after the verdict, and the exit status
  // is not 0.
  reports::TextOptions text;
  text.show_all = a.show_all;
  std::vector<std::string> unwritten;
  if (!a.json.empty()) {
    if (json_to_stdout) {
      std::cout << reports::to_json(m).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n"
                << std::flush;
    } else if (Status st = reports::write_json(m, a.json); !st.ok()) {
      unwritten.push_back(st.message());
    } else if (!a.quiet) {
      std::cerr << "wrote " << a.json << "\n";
    }
  }
  if (!report_dir.empty()) {
    std::vector<std::string> written, removed;
    if (Status st = reports::write_reports(m, report_dir, a.formats, &written, &removed); !st.ok())
      unwritten.push_back(st.message());
    if (!removed.empty() && !a.quiet) {
      std::string names;
      for (const auto& r : removed) names += (names.empty() ? "" : ", ") + fs::path(r).filename().string();
      std::cerr << fmt::format("twice: removed {} of an earlier run from {}/, which this run does not write again\n",
                               names, report_dir);
    }
    // "twice-report/ (md, json, junit.xml, html)": short enough for one line
    // (every file named in full made it 135 columns).
    std::string kinds;
    for (const auto& w : written) {
      const std::string name = fs::path(w).filename().string();
      const std::size_t dot = name.find('.');
      kinds += (kinds.empty() ? "" : ", ") + (dot == std::string::npos ? name : name.substr(dot + 1));
    }
    if (!written.empty()) {
      text.reports_at = fmt::format("{}/ ({})", report_dir, kinds);
      if (!a.quiet) std::cerr << "wrote " << text.reports_at << "\n";
    }
  }
  // With the JSON on stdout, the text goes to stderr: a pipe gets JSON alone.
  std::ostream& text_out = json_to_stdout ? std::cerr : std::cout;
  text.color = cli::use_color(a.color, ::isatty(json_to_stdout ? STDERR_FILENO : STDOUT_FILENO));
  text_out << reports::render_text(m, text) << std::flush;
  for (const auto& why : unwritten)
    std::cerr << "twice: " << why << " (the verdict above is complete; this report is not written)\n";
  if (m.interrupted) return kExitInterrupted;
  if (!m.all_matched()) return kExitMismatch;
  return unwritten.empty() ? 0 : kExitUsage;
}

struct ReplayArgs {
  std::string handler;
  std::string scenario;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::string schedule;  // --strategy exhaustive: the schedule's text (explore/schedule_text.h)
  std::string strategy = "random";
  int pct_depth = 2;
  int pct_steps = 0;
  std::string scenarios_dir;
  std::string scenario_digest;  // the digest of the file the seed was found on, as a replay command gives it
  bool reconciler = false;  // as `twice run --reconciler`
  bool shrunk = false;
  std::string invariant;
  int shrink_budget = explore::kReplayShrinkBudget;
  cli::EngineArgs engines;
  bool in_process = false;  // run it in this process (for a debugger), not a contained child
  int cell_timeout = explore::IsolationLimits{}.timeout_seconds;  // contained: seconds without a scheduling point
};

// A printed command's --scenario-digest against the file read now: a file
// edited since the seed was found (or a bundled scenario an upgrade changed)
// would play another run under the same seed, and tell another story than
// the report the command was copied from.
void require_scenario_digest(const std::string& wanted, const gateway::Scenario& scenario, const std::string& ref,
                           const std::string& dir) {
  if (Status st = gateway::check_scenario_digest(gateway::scenario_ref_file(ref, dir), scenario.digest, wanted,
                                                 "--scenario-digest", "leave out --scenario-digest");
      !st.ok())
    throw UsageError{st.message()};
}

int cmd_replay(const ReplayArgs& a) {
  const std::string dir = a.scenarios_dir.empty() ? default_scenarios_dir() : a.scenarios_dir;
  const HandlerInfo* handler = find_handlers({a.handler}).front();
  gateway::Scenario scenario = load_scenarios(dir, {a.scenario}).front();
  require_scenario_digest(a.scenario_digest, scenario, a.scenario, dir);
  if (a.reconciler) scenario.reconciler = true;
  const bool exhaustive = a.strategy == "exhaustive";
  if (exhaustive && a.schedule.empty())
    throw UsageError{"--strategy exhaustive replays a --schedule, as `twice run --strategy exhaustive` printed it"};
  if (!exhaustive && !a.schedule.empty()) throw UsageError{"--schedule goes with --strategy exhaustive"};
  if (!exhaustive && !a.seed_given) throw UsageError{"--seed is required (as `twice run` printed it)"};
  if (exhaustive && a.seed_given)
    throw UsageError{"--seed does not go with --strategy exhaustive: its --schedule fixes the run; leave --seed out"};
  if (exhaustive && a.shrunk)
    throw UsageError{"--shrunk: an exhaustive counterexample's schedule is already the shrunk one; replay it as printed"};
  if (!a.invariant.empty() && !a.shrunk)
    throw UsageError{"--invariant goes with --shrunk: it names the violation to shrink for"};
  if (!a.invariant.empty() && !check::is_invariant(a.invariant))
    throw UsageError{fmt::format("--invariant '{}': no such invariant; known: {}", a.invariant, check::invariant_names())};
  // Resolved in the run, not here: PCT's k is measured by running the handler.
  const sim::StrategySpec given = strategy_from(a.strategy, a.pct_depth, a.pct_steps);

  run::RunSpec spec{&scenario, handler, given, a.seed, std::nullopt};
  if (exhaustive) {
    StatusOr<std::vector<std::uint64_t>> schedule = explore::parse_schedule(a.schedule);
    if (!schedule.ok()) throw UsageError{schedule.status().message()};
    spec.choices = std::move(schedule).value();
  }
  cli::EngineSelection engines;
  if (Status st = engines.resolve(a.engines); !st.ok()) throw UsageError{st.message()};
  if (engines.choices().size() != 1) throw UsageError{"replay runs on one engine and one isolation level"};
  require_schemas({handler}, engines);
  spec.engine = engines.choices().front();
  // Prints through `out`, each event as the run makes it.
  const auto replay = [&](const std::function<void(const std::string&)>& out) -> int {
    spec.strategy = explore::resolve_strategy(given, scenario, *handler);
    const sim::StrategySpec& strategy = spec.strategy;
    if (a.shrunk) {
      // Shrinking is deterministic: from the seed we get the same counterexample
      // the run printed, and replay its choice sequence.
      const run::RunResult original = replayed(spec);
      if (original.verdict.violations.empty()) {
        std::cerr << fmt::format("twice: seed {} shows no violation for {} on {}; nothing to shrink\n", a.seed,
                                 handler->name, scenario.name);
        return kExitUsage;
      }
      const std::string invariant = a.invariant.empty() ? original.verdict.violations.front().invariant : a.invariant;
      if (!original.has(invariant)) {
        // A verdict's violations come grouped by invariant.
        std::string shown, last;
        int kinds = 0;
        for (const auto& v : original.verdict.violations)
          if (v.invariant != last) {
            shown += (kinds++ == 0 ? "" : ", ") + v.invariant;
            last = v.invariant;
          }
        std::cerr << fmt::format("twice: seed {} shows no {} for {} on {}; it shows {}: give {} to --invariant\n", a.seed,
                                 invariant, handler->name, reports::terminal_text(scenario.name), shown,
                                 kinds == 1 ? "that" : "one of them");
        return kExitUsage;
      }
      // Same budget as `twice run`'s default, so the same counterexample.
      try {
        const auto cex =
            explore::shrink_counterexample(scenario, *handler, strategy, a.seed, invariant, a.shrink_budget, spec.engine);
        spec.choices = cex.choices;
      } catch (const explore::CellError& e) {
        throw UsageError{e.what()};
      }
    }
    // A schedule that does not fit the run (mistyped, of another scenario, or
    // the scenario changed since) would tell another story as if it were the
    // one: a run without a trace checks it before any line is printed.
    if (exhaustive) {
      run::RunSpec silent = spec;
      silent.record_trace = false;
      if (Status st = explore::check_schedule_fits(*spec.choices, replayed(silent).choices); !st.ok())
        throw UsageError{st.message()};
    }
    // A scenario's names and a callback's payload reach these lines: each is
    // kept on its line, its control characters shown escaped, as `twice run` does.
    using reports::terminal_text;
    // The heading comes with the first event: a run that cannot start prints nothing but its error.
    bool headed = false;
    const auto head = [&] {
      if (std::exchange(headed, true)) return;
      if (exhaustive)
        out(fmt::format("# twice replay: {} on {}{}, strategy exhaustive, schedule {}\n", handler->name,
                        terminal_text(scenario.name), spec.engine.cell_suffix(), explore::schedule_text(*spec.choices)));
      else
        out(fmt::format("# twice replay: {} on {}{}, strategy {}, seed {}{}\n", handler->name,
                        terminal_text(scenario.name), spec.engine.cell_suffix(), sim::strategy_name(strategy), a.seed,
                        a.shrunk ? " (shrunk counterexample)" : ""));
      // Another server, or another version, can tell another story: say which one this is.
      if (const auto server = explore::engine_server(spec.engine))
        out("# on the " + reports::server_sentence(*server, [](std::string_view s) { return terminal_text(s); }) + "\n");
    };
    spec.on_event = [&](const sim::TraceEvent& e) {
      head();
      out(terminal_text(sim::format_event(e)) + '\n');
    };
    const run::RunResult r = replayed(spec);
    head();
    std::string tail = fmt::format("# quiescent at {} after {} scheduling points\n", format_time(r.end_time), r.steps);
    for (const auto& acc : r.verdict.accounts)
      tail += fmt::format("# {}: balance {}, ledger credits {}, should be {}\n", terminal_text(acc.user), acc.balance,
                          acc.ledger_sum, acc.should_be);
    if (r.verdict.violations.empty()) tail += "# verdict: no violation\n";
    for (const auto& v : r.verdict.violations)
      tail += fmt::format("# verdict: {}: {}\n", v.invariant, terminal_text(v.detail));
    out(tail);
    return r.verdict.violations.empty() ? 0 : kExitMismatch;
  };
  // A server engine's run stays in this process, as `twice run`'s cells do.
  if (a.in_process || !spec.engine.is_sqlite()) {
    const int status = replay([](const std::string& text) { std::cout << text; });
    std::cout << std::flush;
    return status;
  }
  // In a contained child, as a `twice run` cell: a handler that crashes,
  // exits or hangs ends the trace printed so far with a verdict that says so.
  std::signal(SIGINT, on_stop_now);
  std::signal(SIGTERM, on_stop_now);
  const explore::ContainedEnd end = explore::run_contained(a.cell_timeout, [&] {
    // Each line as it comes, straight to twice's stdout: what a crash cuts short is out already.
    std::string pending;
    const auto out = [&](const std::string& text) {
      pending += text;
      if (pending.size() < (1 << 16) && !text.ends_with('\n')) return;
      process::write_all(explore::twice_stdout(), pending.data(), pending.size());
      pending.clear();
    };
    try {
      return replay(out);
    } catch (const UsageError& e) {
      std::cerr << "twice: " << e.message << "\n";
      return kExitUsage;
    }
  });
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (const std::string left = reports::processes_left_sentence(end.processes_left, "replay"); !left.empty())
    std::cerr << "twice: " << left << "\n";
  if (end.finished) return end.status;
  std::cout << fmt::format("# verdict: {}: {}\n", end.verdict, end.detail) << std::flush;
  return kExitMismatch;
}

int cmd_list(const std::string& scenarios_dir, bool json) {
  const std::string dir = scenarios_dir.empty() ? default_scenarios_dir() : scenarios_dir;
  if (json) {
    // A plugin's text need not be UTF-8: replaced, not thrown on.
    std::cout << cli::list_as_json(dir, load_scenarios(dir, {})).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  // Read first: a folder that cannot be listed is one line on stderr, not a half-printed list.
  const std::vector<gateway::Scenario> scenarios = load_scenarios(dir, {});
  std::cout << "handlers:\n";
  // A plugin's handlers and jobs name and describe themselves: shown escaped, as the scenarios are.
  for (const auto* h : HandlerRegistry::instance().all())
    std::cout << fmt::format("  {:<22} {}\n", reports::terminal_text(h->name), reports::terminal_text(h->description));
  std::cout << "\nscenarios (" << reports::terminal_text(dir) << "):\n";
  for (const auto& s : scenarios) {
    std::cout << fmt::format("  {:<24} {}\n", reports::terminal_text(s.name), reports::terminal_text(s.description));
    // A gateway unlike its profile's (a timeout or schedule of the file's own) is said under it.
    if (const std::string departs = gateway::gateway_departures(s); !departs.empty())
      std::cout << fmt::format("  {:<24} {}\n", "", departs);
  }
  std::cout << "\ninvariants:\n";
  for (const auto& i : check::invariants()) std::cout << fmt::format("  {:<22} {}\n", i.name, i.violated_when);
  std::cout << "\nbackground jobs (scenario [merchant] section):\n";
  for (const auto* j : JobRegistry::instance().all())
    std::cout << fmt::format("  {:<22} {}\n", reports::terminal_text(j->name), reports::terminal_text(j->description));
  std::cout << "\ngateway profiles (a scenario's [gateway] table sets its own timeout and retry intervals):\n";
  for (const auto& p : gateway::all_profiles()) {
    std::cout << fmt::format("  {:<22} {}\n", p.name, p.description);
    std::cout << fmt::format("  {:<22} events: paid {}{}, refund {}, close {}\n", "", p.paid_event_type,
                             !p.second_paid_event_type.empty() ? " then " + p.second_paid_event_type : "",
                             p.refunded_event_type + (p.refunded_event_type == p.closed_event_type ? " with a refund amount" : ""),
                             p.closed_event_type.empty() ? "(none)" : p.closed_event_type);
  }
  return 0;
}

// CLI11's message about the command line may quote an argument whole: an
// --engine-url or --db given to a command that does not take it, or after a
// misspelt flag. A URL's password is shown there as it is everywhere else.
std::string without_argument_passwords(std::string message, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) message = engine::without_url_passwords(message, argv[i]);
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "twice plays a payment gateway against payment-callback handlers on a controlled scheduler and a virtual\n"
      "clock, injects duplicates, retries and lost acks, and checks that every payment is credited exactly once.\n"
      "When a handler breaks, it prints a shrunk interleaving that breaks it, replayable from one seed.",
      "twice"};
  app.require_subcommand(1);
  // Before the subcommands: each copies the app's formatter when added.
  app.formatter(std::make_shared<cli::HelpFormatter>());
  app.footer(
      "\nEach command's options, exit status and examples: twice <command> --help.\n"
      "Docs: README.md and docs/ in twice's source tree (docs/writing-a-handler.md, docs/scenarios.md, docs/ci.md);\n"
      "an installed twice has writing-a-handler.md and scenarios.md in <prefix>/share/doc/twice.");
  // Said in each command's --help: where the bundled scenarios are read from here.
  const std::string scenarios_dir_help = fmt::format(
      "Folder of bundled scenarios (default: ./scenarios when it has expected.toml, else an installed twice's "
      "<prefix>/share/twice/scenarios, else the source tree's; here: {})",
      default_scenarios_dir());
  app.set_version_flag("--version", fmt::format("twice {} (handler API version {})", TWICE_TOOL_VERSION, TWICE_API_VERSION));

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "Run handlers against scenarios under many seeds and compare with the expected matrix");
  run->footer(
      "\nWith no --handler and no --scenario, runs every handler against every bundled scenario and writes\n"
      "twice-report/twice-report.{md,json,junit.xml,html} (see docs/ci.md; --no-report to skip).\n"
      "Exit status: 0 the observed matrix equals scenarios/expected.toml; 1 it differs (a regression, or a\n"
      "known-buggy handler no longer caught); 2 a usage or input error; 3 an internal error of twice;\n"
      "130 interrupted (Ctrl-C or SIGTERM: the cells under way finish and the finished cells are reported;\n"
      "again: the cells under way are dropped and the finished ones still reported; a third: at once).\n"
      "Examples:\n"
      "  twice run\n"
      "  twice run --handler check-then-act --scenario concurrent-duplicates --json r.json\n"
      "  twice run --report-dir out --format md,junit\n"
      "  twice run --handler unique-key+cas --seeds 2000 --strategy pct --pct-depth 3");
  run->add_option("--handler", run_args.handlers, "Handlers to run, comma-separated (repeatable); default all. See `twice list`")
      ->delimiter(',');
  run->add_option("--scenario", run_args.scenarios,
                  "Bundled scenario names or paths to .toml files, comma-separated (repeatable); default all")
      ->delimiter(',');
  run->add_option("--seeds", run_args.seeds, "Schedules (seeds) per cell (black-box mode, --endpoint: runs, 10 unless given)")
      ->check(cli::whole_number())
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  run->add_option("--strategy", run_args.strategy,
                  "Scheduling strategy (exhaustive: every schedule within the bounds below, instead of --seeds runs; a "
                  "fault's duration is tried at both ends of its range; step latencies and network delays all at their "
                  "lower end, then all at their upper end)")
      ->check(CLI::IsMember({"random", "pct", "exhaustive"}))
      ->capture_default_str();
  run->add_option("--pct-depth", run_args.pct_depth, "PCT bug depth d (d-1 priority change points)")->check(cli::whole_number())->check(CLI::Range(1, 10))->capture_default_str();
  run->add_option("--pct-steps", run_args.pct_steps,
                  "PCT's k: the scheduling points with a real choice in one run (0: measured per cell from 5 "
                  "calibration runs; the replay commands print the figure used)")
      ->check(cli::whole_number())->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  CLI::Option* preemption_bound = run->add_option("--preemption-bound", run_args.preemption_bound,
                  "--strategy exhaustive: at most this many preemptions per schedule (none: no bound)")
      ->check(CLI::IsMember({"none"}) | CLI::Range(0, 100))
      ->option_text("N=2 (0 to 100, or none)");
  CLI::Option* max_faults =
      run->add_option("--max-faults", run_args.max_faults, "--strategy exhaustive: at most this many faults per schedule")
      ->check(cli::whole_number())->check(CLI::Range(0, 100))
      ->capture_default_str();
  run->add_option("--budget", run_args.budget,
                  "--strategy exhaustive: runs per cell before it stops with an estimate (0: none)")
      ->check(cli::whole_number())->check(CLI::Range(0L, 1'000'000'000L))
      ->capture_default_str();
  run->add_option("--reduction", run_args.reduction,
                  "--strategy exhaustive: sleep-sets (skip orders that only swap independent steps) or none")
      ->check(CLI::IsMember({"sleep-sets", "none"}))
      ->capture_default_str();
  run->add_flag("--prove", run_args.prove,
                "The exhaustive strategy on the handlers expected to pass every scenario given (or those named), "
                "--budget 20000 runs per cell unless given: prints which cells are proved; a cell the expected "
                "matrix requires proved ([proved]) is searched at the bounds it lists unless the bounds are given");
  run->add_flag("--coverage", run_args.coverage,
                "Random and PCT: count the distinct interleavings each cell's seeds ran (in the JSON: distinct_schedules)");
  run->add_option("--seed", run_args.seed, "Base seed: run i of a cell uses a seed derived from it")
      ->type_name("SEED")
      ->check(cli::seed_number())
      ->capture_default_str();
  run->add_option("--json", run_args.json,
                  "Write the results as JSON to this file; - writes it to stdout (the text report then goes to stderr)")
      ->check(cli::path_given());
  run->add_option("--scenarios-dir", run_args.scenarios_dir, scenarios_dir_help)->check(cli::path_given());
  run->add_option("--expected", run_args.expected, "Expected matrix (default: <scenarios-dir>/expected.toml)")
      ->check(cli::path_given());
  run->add_option("--jobs,-j", run_args.jobs, "Cells explored at once (default: one per core)")
      ->check(cli::whole_number())
      ->check(CLI::Range(0, 256));
  run->add_option("--shrink-budget", run_args.shrink_budget, "Runs spent shrinking each counterexample (0: do not shrink)")->check(cli::whole_number())->check(CLI::Range(0, 1'000'000))->capture_default_str();
  run->add_flag("--quiet,-q", run_args.quiet, "No progress on stderr");
  run->add_option("--color", run_args.color,
                  "Colour the report: auto (a terminal, unless NO_COLOR is set), always, never")
      ->option_text("auto|always|never")
      ->transform(cli::one_of({{"auto", std::to_string(static_cast<int>(cli::ColorMode::kAuto))},
                               {"always", std::to_string(static_cast<int>(cli::ColorMode::kAlways))},
                               {"never", std::to_string(static_cast<int>(cli::ColorMode::kNever))}}))
      ->default_str("auto");
  std::string show = "differing";
  run->add_option("--show", show,
                  "Counterexamples to print: differing (of the cells that differ from the expected matrix) or all")
      ->check(CLI::IsMember({"differing", "all"}))
      ->capture_default_str();
  run->add_flag("--reconciler", run_args.reconciler,
                "Pair every scenario with the reconciler job (queries orders still waiting after 30 min)");
  auto* report_dir_opt = run->add_option(
      "--report-dir", run_args.report_dir,
      "Write reports (Markdown, JSON, JUnit XML, HTML) into this folder (default for the full matrix: twice-report)")
      ->check(cli::path_given());
  run->add_option("--format", run_args.formats, "Report formats, comma-separated (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"md", "json", "junit", "html"}));
  run->add_flag("--no-report", run_args.no_report, "Write no report folder, not even for the full matrix")
      ->excludes(report_dir_opt);
  run->add_flag("--in-process", run_args.in_process,
                "Run every cell in this process (for a debugger); by default each SQLite cell runs in a child "
                "process, so that a handler that crashes, exits or hangs becomes its cell's verdict (cells on a "
                "server engine always run in this process: a child would share its connections)");
  run->add_option("--cell-timeout", run_args.cell_timeout,
                  "Seconds a cell's process may go without a scheduling point before it is killed as hung")
      ->check(cli::whole_number())->check(CLI::Range(1, 86'400))
      ->capture_default_str();
  run->add_option("--cell-memory", run_args.cell_memory_mib,
                  "Address space of each cell's process in MiB (0: no limit); past it the cell is out of memory. "
                  "Each task of a run reserves 8 MiB of it for its stack: give a few hundred MiB at least")
      ->check(cli::whole_number())->check(CLI::Range(0, 1'048'576))
      ->capture_default_str();
  cli::add_engine_options(run, run_args.engines);
  cli::BlackboxArgs blackbox_args;
  cli::add_blackbox_options(run, blackbox_args);

  ReplayArgs replay_args;
  auto* replay = app.add_subcommand("replay", "Replay one run from its seed and print its whole trace");
  replay->footer(
      "\nThe same (handler, scenario, strategy, seed) always prints the same trace, byte for byte.\n"
      "The run goes in a child process, as a `twice run` cell does: a handler that crashes, exits or hangs\n"
      "ends the trace printed so far with a last line that says so (# verdict: crashed: SIGSEGV: ...,\n"
      "exited: 0, hung: no scheduling point for 30 s).\n"
      "Exit status: 0 the run shows no violation; 1 it shows one, or the handler crashed, exited or hung;\n"
      "2 a usage or input error; 3 an internal error of twice.\n"
      "Example:\n"
      "  twice replay --handler check-then-act --scenario concurrent-duplicates --seed 5787478153334856 --shrunk");
  replay->add_option("--handler", replay_args.handler, "The handler")->required();
  replay->add_option("--scenario", replay_args.scenario, "A bundled scenario name or a path to a .toml file")->required();
  auto* seed_option = replay->add_option("--seed", replay_args.seed, "The run's seed, as `twice run` printed it")
      ->type_name("SEED")
      ->check(cli::seed_number());
  replay->add_option("--strategy", replay_args.strategy, "Scheduling strategy")
      ->check(CLI::IsMember({"random", "pct", "exhaustive"}))
      ->capture_default_str();
  replay->add_option("--schedule", replay_args.schedule,
                     "--strategy exhaustive: the schedule to replay, as `twice run --strategy exhaustive` printed it");
  replay->add_option("--pct-depth", replay_args.pct_depth, "PCT bug depth")->check(cli::whole_number())->check(CLI::Range(1, 10))->capture_default_str();
  replay->add_option("--pct-steps", replay_args.pct_steps, "PCT's k, as the printed replay command gives it (0: measured)")
      ->check(cli::whole_number())->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  replay->add_option("--scenarios-dir", replay_args.scenarios_dir, scenarios_dir_help)->check(cli::path_given());
  replay->add_option("--scenario-digest", replay_args.scenario_digest,
                     "The digest of the scenario file the seed was found on, as the printed replay command gives it "
                     "(eight hex digits of its values: comments and spacing do not count): a file changed since "
                     "is refused, since the same seed or schedule would replay another run");
  replay->add_flag("--reconciler", replay_args.reconciler,
                   "Pair the scenario with the reconciler job, as `twice run --reconciler` did (its replay commands "
                   "carry it)");
  replay->add_flag("--shrunk", replay_args.shrunk, "Replay the shrunk counterexample of this seed instead of the run itself");
  replay->add_option("--invariant", replay_args.invariant, "With --shrunk: which violation to shrink for (default: the first)");
  replay->add_option("--shrink-budget", replay_args.shrink_budget,
                     "With --shrunk: runs spent shrinking (a counterexample's replay command says when it differs)")
      ->check(cli::whole_number())->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  cli::add_engine_options(replay, replay_args.engines);
  replay->add_flag("--in-process", replay_args.in_process,
                   "Run it in this process (for a debugger); by default it runs in a child process, so that a "
                   "handler that crashes, exits or hangs ends the trace with a verdict that says so (on a server "
                   "engine it always runs in this process)");
  replay->add_option("--cell-timeout", replay_args.cell_timeout,
                     "Seconds the run may go without a scheduling point before it is killed as hung")
      ->check(cli::whole_number())->check(CLI::Range(1, 86'400))
      ->capture_default_str();

  std::string list_dir;
  auto* list = app.add_subcommand("list", "List handlers, scenarios, invariants and gateway profiles");
  list->footer(
      "\nUnder a scenario, a line says where its [gateway] table departs from its profile's published (or\n"
      "default) timeout and retry intervals (docs/scenarios.md); --json gives every scenario's figures.\n"
      "Exit status: 0; 2 when the folder or a scenario in it cannot be read (one line on stderr).");
  list->add_option("--scenarios-dir", list_dir, scenarios_dir_help)->check(cli::path_given());
  bool list_json = false;
  list->add_flag("--json", list_json, "Print the lists as one JSON object (docs/cli-json.md)");

  std::vector<std::string> plugins;
  for (auto* command : {run, replay, list})
    command->add_option("--plugin", plugins, "A shared library of your handlers to load first (repeatable); see docs/writing-a-handler.md");

  std::function<int()> stress_action;
  cli::add_stress_command(app, stress_action);
  app.get_subcommand("stress")->add_option(
      "--plugin", plugins, "A shared library of your handlers to load first (repeatable); see docs/writing-a-handler.md");

  // CLI11 answers a misspelt subcommand with "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> commands;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) commands.push_back(sub->get_name());
    if (std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
      const auto nearest = cli::nearest_command(argv[1], commands);
      std::string known;
      for (const auto& c : commands) known += (known.empty() ? "" : ", ") + c;
      std::cerr << fmt::format("twice: unknown command '{}'{} (commands: {}; see twice --help)\n", argv[1],
                               nearest ? fmt::format("; did you mean '{}'?", *nearest) : "", known);
      return kExitUsage;
    }
  }

  // Words CLI11 would misread, said before it reads them. The options that
  // take a comma-separated list are those given a delimiter above.
  std::vector<std::string> lists;
  for (CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    for (const CLI::Option* option : command->get_options())
      if (option->get_delimiter() == ',')
        for (const std::string& name : option->get_lnames()) lists.push_back("--" + name);
  if (const std::optional<std::string> misread = cli::misread_word(argc, argv, lists)) {
    std::cerr << fmt::format("twice: {} (see twice{} --help)\n", *misread,
                             argc > 1 && argv[1][0] != '-' ? std::string(" ") + argv[1] : std::string());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // One line, as every other usage error: what is wrong, and where help is.
    std::string where = "twice";
    for (const auto* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      // CLI11 prints the extras in reverse ("postgres --engine"); name them in the
      // order given, and say which command takes an option this one does not.
      const CLI::App* deepest = &app;
      while (!deepest->get_subcommands().empty()) deepest = deepest->get_subcommands().front();
      const std::vector<std::string> extras = deepest->remaining();
      if (!extras.empty()) {
        std::string given;
        for (const auto& x : extras) given += (given.empty() ? "" : " ") + x;
        std::string owners;
        if (extras.front().rfind("--", 0) == 0) {
          const std::string name = extras.front().substr(0, extras.front().find('='));
          for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
            if (sub == deepest) continue;
            try {
              (void)sub->get_option(name);
              owners += fmt::format("{}{}", owners.empty() ? "" : ", ", sub->get_name());
            } catch (const CLI::OptionNotFound&) {
            }
          }
        }
        const std::string option = extras.front().substr(0, extras.front().find('='));
        message = owners.empty()
                      ? fmt::format("{} does not take: {}", where, given)
                      : fmt::format("{} does not take {}; {} is an option of {}", where, given, option, owners);
      }
    }
    std::cerr << fmt::format("twice: {} (see {} --help)\n", without_argument_passwords(message, argc, argv), where);
    return kExitUsage;
  }
  run_args.show_all = show == "all";
  try {
    // The same library twice (a pasted replay command that already carries
    // --plugin, plus one more) is loaded once, and said so.
    std::vector<std::string> unique_plugins;
    std::vector<std::string> seen;
    for (const auto& p : plugins) {
      std::error_code ec;
      const std::string file = fs::weakly_canonical(fs::absolute(p, ec), ec).string();
      if (std::find(seen.begin(), seen.end(), file) != seen.end()) {
        std::cerr << "twice: --plugin " << p << " is given twice; loading it once\n";
        continue;
      }
      seen.push_back(file);
      unique_plugins.push_back(p);
    }
    StatusOr<std::map<std::string, std::string>> loaded = cli::load_plugins(unique_plugins);
    if (!loaded.ok()) throw UsageError{loaded.status().message()};
    run_args.plugin_of = std::move(loaded).value();
    if (*run && run->count("--endpoint") > 0) {
      // Black-box mode: the endpoint is the one handler row; no expected matrix, no engine of twice's.
      if (blackbox_args.endpoint.empty())
        throw UsageError{"--endpoint is empty: give the service's URL, http://127.0.0.1:PORT/path"};
      if (!run_args.handlers.empty()) throw UsageError{"--endpoint tests a running service: drop --handler"};
      // An option black-box mode does not read is a mistake to say, not to ignore.
      const std::pair<std::vector<const char*>, const char*> not_read[] = {
          {{"--strategy", "--pct-depth", "--pct-steps", "--preemption-bound", "--max-faults", "--budget", "--reduction",
            "--prove", "--coverage", "--shrink-budget"},
           "explores twice's own schedules, and with --endpoint the interleaving is the operating system's"},
          {{"--expected", "--show"}, "compares cells with the expected matrix, and --endpoint has none"},
          {{"--reconciler"}, "adds twice's reconciler job, and a service runs its own background jobs"},
          {{"--isolation"}, "sets the isolation level of twice's engines, and --endpoint reads the service's own database"},
          {{"--in-process", "--cell-timeout", "--cell-memory", "--jobs"},
           "runs handler cells in child processes, and --endpoint runs none"}};
      for (const auto& [options, why] : not_read)
        for (const char* option : options)
          if (run->count(option) > 0) throw UsageError{fmt::format("{} {}: leave it out", option, why)};
      if (blackbox_args.endpoint_command.empty())
        for (const char* option : {"--kill-window", "--service-log"})
          if (run->count(option) > 0)
            throw UsageError{fmt::format("{} goes with --endpoint-command (twice kills only a service it started): "
                                         "leave it out, or add --endpoint-command",
                                         option)};
      if (!run_args.engines.engines.empty() || !run_args.engines.url.empty())
        throw UsageError{"--endpoint reads the service's own database: give it with --db, not --engine/--engine-url"};
      const std::string dir = run_args.scenarios_dir.empty() ? default_scenarios_dir() : run_args.scenarios_dir;
      if (run_args.scenarios.empty())
        throw UsageError{"--endpoint needs --scenario (a bundled name or a .toml path); see `twice list`"};
      if (!run_args.report_dir.empty() || !run_args.formats.empty())
        throw UsageError{"--endpoint writes no report folder; keep every run with --json FILE"};
      blackbox_args.json = run_args.json;
      // Each run takes real time: 10 unless --seeds says otherwise.
      const int runs = run->count("--seeds") > 0 ? run_args.seeds : 10;
      std::vector<gateway::Scenario> scenarios =
          load_scenarios(dir, run_args.scenarios, !run_args.scenarios_dir.empty());
      if (!blackbox_args.scenario_digest.empty()) {
        // A repeat command's: it names one scenario, the one the digest is of.
        if (scenarios.size() != 1)
          throw UsageError{"--scenario-digest is the digest of one scenario file: give one --scenario, as the "
                           "repeat command printed it"};
        require_scenario_digest(blackbox_args.scenario_digest, scenarios.front(), run_args.scenarios.front(), dir);
      }
      return cli::run_blackbox_command(blackbox_args, scenarios, runs, run_args.seed, run_args.quiet);
    }
    if (*run) {
      for (const char* option : {"--db", "--oracle", "--keys-dir", "--time-scale", "--min-timeout", "--endpoint-command",
                                 "--kills", "--kill-window", "--service-log", "--query-port"})
        if (run->count(option) > 0) throw UsageError{fmt::format("{} belongs to black-box mode: add --endpoint URL", option)};
      if (run->count("--scenario-digest") > 0)
        throw UsageError{"--scenario-digest checks the scenario of one run: it goes with `twice replay`, or with "
                         "--endpoint (black-box mode's repeat commands)"};
      run_args.bounds_given = preemption_bound->count() > 0 || max_faults->count() > 0;
      // An option the chosen strategy does not read is a mistake to say, not to ignore.
      const bool exhaustive = run_args.prove || run_args.strategy == "exhaustive";
      if (run_args.prove && run->count("--strategy") > 0 && run_args.strategy != "exhaustive")
        throw UsageError{fmt::format("--prove runs the exhaustive strategy, not {}: leave --strategy out",
                                     run_args.strategy)};
      if (!exhaustive)
        for (const char* option : {"--preemption-bound", "--max-faults", "--budget", "--reduction"})
          if (run->count(option) > 0)
            throw UsageError{fmt::format("{} bounds the exhaustive strategy: add --strategy exhaustive (or --prove), "
                                         "or leave it out",
                                         option)};
      if (exhaustive && run->count("--seeds") > 0)
        throw UsageError{"--seeds: the exhaustive strategy runs every schedule within its bounds, not seeds; "
                         "--budget caps the runs"};
      if (exhaustive && run->count("--seed") > 0)
        throw UsageError{"--seed: the exhaustive strategy draws nothing at random (a schedule is its choices); "
                         "leave it out"};
      if (exhaustive && run_args.coverage)
        throw UsageError{"--coverage counts the distinct interleavings of random and PCT runs; the exhaustive "
                         "strategy reports its schedules itself: leave it out"};
      if (run_args.strategy != "pct")
        for (const char* option : {"--pct-depth", "--pct-steps"})
          if (run->count(option) > 0)
            throw UsageError{fmt::format("{} goes with --strategy pct", option)};
      if (run_args.no_report && !run_args.formats.empty())
        throw UsageError{"--format chooses the reports to write and --no-report writes none: give one of them"};
      return cmd_run(run_args);
    }
    if (*replay) {
      replay_args.seed_given = seed_option->count() > 0;
      if (replay_args.strategy != "pct")
        for (const char* option : {"--pct-depth", "--pct-steps"})
          if (replay->count(option) > 0) throw UsageError{fmt::format("{} goes with --strategy pct", option)};
      return cmd_replay(replay_args);
    }
    if (*list) return cmd_list(list_dir, list_json);
    if (stress_action) return stress_action();
  } catch (const UsageError& e) {
    std::cerr << "twice: " << e.message << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "twice: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return 0;
}
