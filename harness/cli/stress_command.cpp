#include "cli/stress_command.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/violation.h"
#include "cli/argument_checks.h"
#include "cli/engine_options.h"
#include "cli/exit_status.h"
#include "cli/stop_lines.h"
#include "cli/stop_signal.h"
#include "explore/explorer.h"
#include "process/stop_now.h"
#include "reports/cell_verdict.h"
#include "reports/escape.h"
#include "reports/json_report.h"
#include "stress/stress_database.h"
#include "stress/stress_process.h"
#include "stress/stress_runner.h"
#include "twice/handler.h"
#include "twice_tool_version.h"

namespace twice::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kExitViolations = 1;

// The ranges of the numbers, in --help. Orders are seeded as the rounds reach
// them and each costs a few bytes until the checker reads the run; the
// checker holds every order run in memory (~1 KB each): a million at most.
constexpr long kMaxOrders = 1'000'000;
constexpr long kMaxDeliveries = 10'000'000;
constexpr int kMaxThreads = 1024;
// The servers twice starts take this many connections (postgres_server.cpp
// max_connections=300, mariadb_server.cpp --max-connections=500); twice keeps
// a few for itself (the cluster's, the checker's, the monitor's) and the rest
// may be workers'.
constexpr int kPostgresMaxThreads = 288;
constexpr int kMariadbMaxThreads = 480;
// After a stop, how long the run under way has to end its round and report
// before it is killed (a handler that never returns).
constexpr Micros kStopGrace = 10 * kSecond;

struct StressArgs {
  std::string handler;
  int threads = 8;
  int duplicates = 2;
  long orders = 0;
  long deliveries = 100'000;
  double seconds = 60;
  int redeliveries = 3;
  bool until_violation = false;
  bool quiet = false;
  std::string json;  // a file, or "-": stdout (the text then goes to stderr)
  EngineArgs engines;
};

// The violations a JSON report lists one by one; all are counted.
constexpr std::size_t kViolationsListed = 100;

// The first SIGINT, SIGTERM or SIGHUP stops the runs after the round under
// way and writes the reports so far; a second one kills the run under way
// (g_stop_now) and says which reports it keeps and drops, as `twice run`'s
// does (cli/stop_lines.h); a third, or a second before any run started, ends
// twice at once (the guardians remove the servers' folders). Only
// async-signal-safe calls here.
std::atomic<bool> g_stop{false};
std::atomic<bool> g_stop_now{false};
std::atomic<int> g_signal{0};
std::atomic<bool> g_runs_started{false};
std::atomic<bool> g_progress_on_tty{false};
// The runs (one per engine and level) started and finished: a run whose
// report comes in after a stop now is dropped, as the stop said.
process::StopNow g_stress_runs;

StopCount g_stress_stops;  // cli/stop_signal.h

extern "C" void on_stress_signal(int sig) {
  const StopSignal kind = classify_stop(g_stop, g_stress_stops);
  if (kind == StopSignal::kRepeat) return;  // `timeout`'s second copy of the first
  if (kind == StopSignal::kLater || (kind == StopSignal::kSecond && !g_runs_started.load())) {
    if (kind == StopSignal::kLater) say_dropped(g_stress_runs.now().finished, "run");
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  if (kind == StopSignal::kSecond) {  // kill the run under way
    const process::StopNow::Counts counts = g_stress_runs.stop();
    g_stop_now = true;
    say_stopping_now(counts, "run", sig, g_progress_on_tty.load());
    return;
  }
  g_signal = sig;
  static constexpr char kClear[] = "\r\x1b[K";
  static constexpr char kSay[] =
      "twice: stopping after the round under way; the reports so far will be written (Ctrl-C again to stop now)\n";
  if (g_progress_on_tty.load()) {
    [[maybe_unused]] const auto c = ::write(STDERR_FILENO, kClear, sizeof kClear - 1);
  } else {
    [[maybe_unused]] const auto c = ::write(STDERR_FILENO, "\n", 1);
  }
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSay, sizeof kSay - 1);
}

// The handlers of SIGINT, SIGTERM and SIGHUP while `stress` runs; the
// previous ones come back when it goes.
class StopSignals {
 public:
  StopSignals() {
    g_stop = false;
    g_stop_now = false;
    g_signal = 0;
    g_runs_started = false;
    struct sigaction sa {};
    sa.sa_handler = on_stress_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a wait is cut short, and the stop seen at once
    for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &sa, &previous_[i]);
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction previous_[3] {};
};

std::string known_handlers() {
  std::string names;
  for (const auto* h : HandlerRegistry::instance().all())
    names += (names.empty() ? "" : ", ") + reports::terminal_text(h->name);
  return names;
}

std::string percent(double rate) { return fmt::format("{:.3f}%", 100.0 * rate); }
std::string count(long n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

std::string judged_list() {
  std::string out;
  for (const char* name : stress::kInvariantsJudged) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// `server`: the one a server engine ran on, named as `twice run`'s report names
// it (its URL without its password); none on SQLite, whose report stays as it was.
nlohmann::json header_json(const std::string& handler, const std::string& database,
                           const std::optional<results::EngineServer>& server) {
  nlohmann::json j = {{"schema_version", 1},
                      {"tool", "twice"},
                      {"tool_version", TWICE_TOOL_VERSION},
                      {"handler", handler},
                      {"database", database}};
  if (server) j["server"] = reports::server_json(*server);
  return j;
}

// The accounts some violation names (lost_update, wrong_amount name an
// account; double_credit and lost_payment an order).
std::set<std::string> accounts_named(const stress::StressReport& r) {
  std::set<std::string> accounts, named;
  for (const auto& acc : r.verdict.accounts) accounts.insert(acc.user);
  for (const auto& v : r.verdict.violations)
    if (accounts.count(v.subject)) named.insert(v.subject);
  return named;
}

// The report as JSON (docs/cli-json.md): the same figures as the text,
// and the first kViolationsListed violations.
nlohmann::json report_json(const stress::StressReport& r, const std::optional<results::EngineServer>& server) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : r.verdict.violations) {
    if (violations.size() == kViolationsListed) break;
    violations.push_back({{"name", v.invariant}, {"subject", v.subject}, {"detail", v.detail}});
  }
  nlohmann::json j = header_json(r.handler, r.database, server);
  j.update({{"redeliveries", r.redeliveries},
            {"threads", r.threads},
            {"duplicates", r.duplicates},
            {"orders_planned", r.orders_planned},
            {"orders_run", r.orders_run},
            {"deliveries", r.deliveries},
            {"acked", r.acked},
            {"seconds", static_cast<double>(r.elapsed) / kSecond},
            {"seeding_seconds", static_cast<double>(r.seeding) / kSecond},
            {"deliveries_per_second", r.deliveries_per_second()},
            {"stopped_by", r.stopped_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopped_by)},
            {"invariants_judged", stress::kInvariantsJudged},
            {"violations_per_invariant", r.violations_per_invariant},
            {"violation_count", r.verdict.violations.size()},
            {"violating_orders", r.violating_orders},
            {"violation_rate", r.violation_rate()},
            {"accounts", r.verdict.accounts.size()},
            {"violating_accounts", accounts_named(r).size()},
            {"violations", violations}});
  // Only when some were left, as in `twice run`'s cells.
  if (r.processes_left > 0) j["processes_left"] = r.processes_left;
  return j;
}

void print_report(const stress::StressReport& r, const std::optional<results::EngineServer>& server, std::ostream& out) {
  const double seconds = static_cast<double>(r.elapsed) / kSecond;
  out << fmt::format("twice stress: {} on {} threads, {} of each order released together, {}\n",
                     reports::terminal_text(r.handler), r.threads,
                     r.duplicates == 1 ? std::string("1 copy") : fmt::format("{} copies", r.duplicates), r.database);
  // Another server, or another version, can give other counts: say which one this was.
  if (server)
    out << fmt::format("  server       {}\n",
                       reports::server_sentence(*server, [](std::string_view s) { return reports::terminal_text(s); }));
  std::string stopped;
  if (r.stopped_by == "interrupted") stopped = fmt::format(", interrupted ({} planned)", count(r.orders_planned, "order"));
  else if (!r.stopped_by.empty())
    stopped = fmt::format(", stopped by {} ({} planned)", r.stopped_by, count(r.orders_planned, "order"));
  out << fmt::format("  deliveries   {} ({} × {}){}\n", r.deliveries, count(r.orders_run, "order"), r.duplicates,
                     stopped);
  const long not_acked = r.deliveries - r.acked;
  if (not_acked == 0)
    out << fmt::format("  replies      all {} acked\n", r.acked);
  else if (r.redeliveries == 0)
    out << fmt::format("  replies      {} acked, {} not acked (the gateway would retry those)\n", r.acked, not_acked);
  else
    out << fmt::format("  replies      {} acked, {} not acked after {} of unacked copies\n", r.acked, not_acked,
                       r.redeliveries == 1 ? std::string("1 redelivery")
                                           : fmt::format("{} redeliveries", r.redeliveries));
  out << fmt::format("  throughput   {:.0f} deliveries/s ({:.2f} s{})\n", r.deliveries_per_second(), seconds,
                     r.seeding > 0 ? fmt::format(", {:.2f} s of it seeding orders", static_cast<double>(r.seeding) / kSecond)
                                   : "");
  out << fmt::format("  judged       {} (the other invariants need `twice run`)\n", judged_list());
  if (const std::string left = reports::processes_left_sentence(r.processes_left, "run"); !left.empty())
    out << fmt::format("  processes    {}\n", left);
  if (r.verdict.violations.empty()) {
    out << fmt::format("  verdict      no violation in {}\n", count(r.orders_run, "order"));
    return;
  }
  // double_credit and lost_payment name an order, lost_update an account.
  std::set<std::string> accounts;
  for (const auto& acc : r.verdict.accounts) accounts.insert(acc.user);
  const std::set<std::string> accounts_hit = accounts_named(r);
  for (const auto& [invariant, n] : r.violations_per_invariant) {
    long orders = 0, of_accounts = 0;
    for (const auto& v : r.verdict.violations) {
      if (v.invariant != invariant) continue;
      if (v.subject.starts_with("S-")) ++orders;
      if (accounts.count(v.subject)) ++of_accounts;
    }
    std::string what = std::to_string(n);
    if (orders == n)
      what = fmt::format("{} ({} of orders)", count(n, "order"),
                         percent(static_cast<double>(n) / static_cast<double>(std::max(r.orders_run, 1L))));
    else if (of_accounts == n)
      what = fmt::format("{} of {}", n, count(static_cast<long>(accounts.size()), "account"));
    out << fmt::format("  violation    {:<16} {}\n", invariant, what);
  }
  const auto& first = r.verdict.violations.front();
  out << fmt::format("  e.g.         {}\n", reports::terminal_text(first.detail));
  std::vector<std::string> parts;
  if (r.violating_orders > 0)
    parts.push_back(fmt::format("{} of {} violated ({})", r.violating_orders, count(r.orders_run, "order"),
                                percent(r.violation_rate())));
  if (!accounts_hit.empty())
    parts.push_back(fmt::format("{} of {} wrong", accounts_hit.size(),
                                count(static_cast<long>(accounts.size()), "account")));
  std::string verdict;
  for (const auto& p : parts) verdict += (verdict.empty() ? "" : "; ") + p;
  out << fmt::format("  verdict      {}\n", verdict);
}

// Where --json FILE goes: written to a temporary file beside it and renamed
// over it once written, so that a run that fails or is killed leaves an
// existing FILE as it was. check() tries that now, so that a FILE that cannot
// be written fails before a minute of stress.
class JsonFile {
 public:
  explicit JsonFile(std::string path) : path_(std::move(path)) {}
  Status check() const {
    if (Status s = check_replaceable_file(path_, "JSON report"); !s.ok()) return s;
    std::string tmp;
    const int fd = make_temp(tmp);
    if (fd < 0) return Status::error(fmt::format("cannot write --json {}: {}", path_, std::strerror(errno)));
    ::close(fd);
    ::unlink(tmp.c_str());
    return Status::OK();
  }
  Status write(const std::string& text) const {
    std::string tmp;
    const int fd = make_temp(tmp);
    if (fd < 0) return Status::error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    const char* data = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return Status::error(fmt::format("cannot write {}: {}", path_, std::strerror(e)));
      }
      data += n;
      left -= static_cast<std::size_t>(n);
    }
    // mkstemp makes it 0600; the report gets what a new file would.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    if (::close(fd) != 0 || ::rename(tmp.c_str(), path_.c_str()) != 0) {
      const int e = errno;
      ::unlink(tmp.c_str());
      return Status::error(fmt::format("cannot write {}: {}", path_, std::strerror(e)));
    }
    return Status::OK();
  }

 private:
  int make_temp(std::string& tmp) const {
    const fs::path p(path_);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    tmp = (dir / ("." + p.filename().string() + ".twice-XXXXXX")).string();
    return ::mkstemp(tmp.data());
  }
  std::string path_;
};

std::string describe(const engine::EngineChoice& choice) {
  switch (choice.engine) {
    case Engine::kSqlite:
      return "SQLite WAL file";
    case Engine::kPostgres:
      return fmt::format("PostgreSQL {}", engine::isolation_name(choice.isolation));
    case Engine::kMariadb:
      return fmt::format("MariaDB (InnoDB) {}", engine::isolation_name(choice.isolation));
  }
  return "?";
}

// The engines the flags name, without starting any: `all` is every one.
std::vector<Engine> engines_named(const EngineArgs& args) {
  std::vector<Engine> out;
  auto add = [&out](Engine e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  if (args.engines.empty()) add(Engine::kSqlite);
  for (const auto& name : args.engines) {
    if (name == "sqlite" || name == "all") add(Engine::kSqlite);
    if (name == "postgres" || name == "all") add(Engine::kPostgres);
    if (name == "mariadb" || name == "all") add(Engine::kMariadb);
  }
  return out;
}

// What is wrong with the arguments before anything starts: one line, "" when nothing.
std::string usage_error(const StressArgs& a, const HandlerInfo& handler) {
  if (a.duplicates > a.threads)
    return fmt::format("--duplicates {} exceeds --threads {}: each copy needs its own thread", a.duplicates, a.threads);
  if (a.orders == 0 && (a.deliveries + a.duplicates - 1) / a.duplicates > kMaxOrders)
    return fmt::format("--deliveries {} makes {} orders of {} copies; at most {}: lower --deliveries or raise "
                       "--duplicates",
                       a.deliveries, (a.deliveries + a.duplicates - 1) / a.duplicates, a.duplicates, kMaxOrders);
  const std::string safe_name = reports::terminal_text(handler.name);
  for (Engine e : engines_named(a.engines)) {
    if (handler.make()->schema().setup_sql_for(e).empty())
      return fmt::format("handler {} has no schema for {} (Schema::{}_setup_sql); run it with --engine sqlite", safe_name,
                         engine_name(e), engine_name(e));
    if (!a.engines.url.empty()) continue;  // someone else's server: its own limit, its own error
    if (e == Engine::kPostgres && a.threads > kPostgresMaxThreads)
      return fmt::format("--threads {} is more than the PostgreSQL server twice starts can serve (max_connections=300; "
                         "at most {} workers): lower --threads, or use --engine-url",
                         a.threads, kPostgresMaxThreads);
    if (e == Engine::kMariadb && a.threads > kMariadbMaxThreads)
      return fmt::format("--threads {} is more than the MariaDB server twice starts can serve (max_connections=500; "
                         "at most {} workers): lower --threads, or use --engine-url",
                         a.threads, kMariadbMaxThreads);
  }
  return {};
}

int run_stress_command(const StressArgs& a) {
  const HandlerInfo* handler = HandlerRegistry::instance().find(a.handler);
  if (!handler) {
    std::cerr << fmt::format("twice: unknown handler '{}'; known: {}\n", reports::terminal_text(a.handler),
                             known_handlers());
    return kExitUsage;
  }
  if (const std::string error = usage_error(a, *handler); !error.empty()) {
    std::cerr << "twice: stress: " << error << "\n";
    return kExitUsage;
  }
  // Stress runs the notify path alone: a handler's background jobs (an outbox
  // relay, a repair job) would call services stress has not. Say so rather
  // than let a pass read as covering what those jobs do.
  if (const std::vector<std::string> jobs = handler->make()->jobs(); !jobs.empty()) {
    std::string names;
    for (const auto& j : jobs) names += (names.empty() ? "" : ", ") + j;
    std::cerr << fmt::format(
        "twice: stress: note: {}'s background jobs ({}) do not run in stress mode; what they deliver is judged by "
        "`twice run`\n",
        reports::terminal_text(handler->name), reports::terminal_text(names));
  }
  std::optional<JsonFile> json_file;
  if (!a.json.empty() && a.json != "-") {
    json_file.emplace(a.json);
    if (Status s = json_file->check(); !s.ok()) {
      std::cerr << "twice: stress: " << s.message() << "\n";
      return kExitUsage;
    }
  }

  stress::StressOptions options;
  options.handler = handler;
  options.threads = a.threads;
  options.duplicates = a.duplicates;
  options.orders = a.orders > 0 ? a.orders : (a.deliveries + a.duplicates - 1) / a.duplicates;
  options.time_limit = static_cast<Micros>(std::llround(a.seconds * kSecond));
  options.stop_at_first_violation = a.until_violation;
  options.redeliveries = a.redeliveries;
  options.stop = &g_stop;
  const bool tty = ::isatty(STDERR_FILENO) && !a.quiet;
  if (tty) {
    options.on_progress = [](const stress::StressProgress& p) {
      fmt::print(stderr, "\r\x1b[K[{}/{} deliveries, {:.1f} s]", p.deliveries_done, p.deliveries_planned,
                 static_cast<double>(p.elapsed) / kSecond);
      std::fflush(stderr);
    };
  }
  const int workers = a.threads / a.duplicates * a.duplicates;
  if (workers != a.threads)
    std::cerr << fmt::format("twice: stress: --threads {} in groups of {} copies: {} threads deliver\n", a.threads,
                             a.duplicates, workers);

  // From here a stop signal is ours: during a server's start it is seen once
  // the server is up (a second one ends twice at once, the guardian removes
  // the server's folder).
  StopSignals signals;
  g_progress_on_tty = tty;
  // The servers it starts are stopped when `engines` goes, on every way out.
  EngineSelection engines;
  if (Status s = engines.resolve(a.engines); !s.ok()) {
    std::cerr << "twice: stress: " << s.message() << "\n";
    return g_stop ? 128 + g_signal.load() : kExitUsage;
  }
  if (g_stop) return 128 + g_signal.load();

  // One run per engine and level, one after another, each in a process of
  // its own with its report; an engine that cannot run is an error line and
  // the others still run. With several asked for, the JSON is an array.
  const bool several = engines.choices().size() > 1;
  nlohmann::json entries = nlohmann::json::array();
  bool violations = false, handler_failed = false, errors = false, interrupted = false, any_result = false;
  std::ostream& text = a.json == "-" ? std::cerr : std::cout;
  g_runs_started = true;
  for (const auto& choice : engines.choices()) {
    if (g_stop) {
      interrupted = true;
      break;
    }
    options.engine = choice;
    const std::optional<results::EngineServer> server = explore::engine_server(choice);
    if (!g_stress_runs.start()) {
      interrupted = true;
      break;
    }
    stress::StressReport report;
    const stress::ContainedRun run = stress::run_stress_contained(options, &g_stop_now, kStopGrace, report);
    // A report that came in after a stop now is dropped, as the stop said.
    const bool kept = g_stress_runs.finish();
    if (tty) {
      fmt::print(stderr, "\r\x1b[K");
      std::fflush(stderr);
    }
    using Outcome = stress::ContainedRun::Outcome;
    const std::string where = several ? fmt::format(" on {}", describe(choice)) : "";
    // "; the handler left 1 process running when the run ended; twice killed it"
    std::string left = reports::processes_left_sentence(run.processes_left, "run");
    if (!left.empty()) left = "; " + left;
    if (!kept) {
      std::cerr << fmt::format("twice: stress: stopped now: the run{} was {}; its report is lost{}\n", where,
                               run.outcome == Outcome::kKilled ? "killed" : "dropped", left);
      interrupted = true;
      break;
    }
    if (run.outcome == Outcome::kReport) {
      print_report(report, server, text);
      text.flush();
      entries.push_back(report_json(report, server));
      any_result = true;
      if (!report.verdict.violations.empty()) violations = true;
      if (report.stopped_by == "interrupted") {
        interrupted = true;
        break;
      }
      continue;
    }
    nlohmann::json entry = header_json(handler->name, describe(choice), server);
    entry["error"] = run.status.message();
    if (run.processes_left > 0) entry["processes_left"] = run.processes_left;
    if (run.outcome == Outcome::kKilled) {
      std::cerr << fmt::format("twice: stress: stopped now: the run{} was killed; its report is lost{}\n", where, left);
      interrupted = true;
      break;
    }
    std::cerr << fmt::format("twice: stress{}: {}{}\n", where, reports::terminal_text(run.status.message()), left);
    entries.push_back(std::move(entry));
    if (run.outcome == Outcome::kHandlerFailed) {
      handler_failed = any_result = true;
    } else {
      errors = true;
      if (several) any_result = true;  // the array says which engine could not run
    }
  }
  if (interrupted && !g_signal.load()) g_signal = SIGINT;

  if (!a.json.empty() && any_result && !entries.empty()) {
    const nlohmann::json& doc = several ? entries : entries[0];
    const std::string json = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (a.json == "-") {
      std::cout << json << std::flush;
    } else if (Status s = json_file->write(json); !s.ok()) {
      std::cerr << "twice: stress: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  if (interrupted) return 128 + g_signal.load();
  if (violations || handler_failed) return kExitViolations;
  if (errors) return kExitUsage;
  return 0;
}

// --seconds: a number of seconds, 0 for no limit, else at least a microsecond
// (the run's clock counts whole microseconds: less would be 0, no limit).
CLI::Validator seconds_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || text.empty() || !std::isfinite(v))
          return fmt::format("'{}' is not a number of seconds", text);
        if (v < 0 || v > 86400 || (v > 0 && v < 1e-6))
          return fmt::format("{} is out of range: give 0 (no limit) or 0.000001 to 86400", text);
        return {};
      },
      "SECONDS", "seconds");
}

}  // namespace

CLI::App* add_stress_command(CLI::App& app, std::function<int()>& action) {
  auto args = std::make_shared<StressArgs>();
  auto* cmd = app.add_subcommand(
      "stress",
      "Fire duplicate callbacks at a handler from real threads against a SQLite file in WAL mode or a database server");
  cmd->footer(fmt::format(
      "\nWorkers take the orders in rounds; the copies of one order wait on a barrier and are released together.\n"
      "The run ends after --orders (or --deliveries) or --seconds, whichever comes first (seeding the orders,\n"
      "done as the rounds reach them, counts); then the same checker as `twice run` reads the database.\n"
      "It judges {} only: the other invariants (ack_before_commit, accepted_invalid, ...)\n"
      "need `twice run`, which also finds and replays a bug; this shows it happen on real threads and how often.\n"
      "Each run goes in a process of its own: a handler that crashes or exits ends that run, not twice; what it\n"
      "forks and leaves running is killed when the run ends, and the report says how many; its stdin is /dev/null.\n"
      "Stress mode has no external services: a handler that calls Env::call is an error (use `twice run`).\n"
      "--engine postgres|mariadb runs the same on a server (started by twice, or --engine-url), each thread on\n"
      "its own blocking connection at --isolation; with several engines or levels, one run and report for each.\n"
      "Ctrl-C (or SIGTERM, SIGHUP) stops after the round under way and writes the reports; again: kills the run\n"
      "under way and writes the reports of the runs before it (one run per engine and level); a third: at once.\n"
      "Exit status: 0 no violation; 1 violations found, or the handler crashed or exited; 2 a usage or setup\n"
      "error (also an engine that could not run, or a handler that calls a service); 3 an internal error;\n"
      "130 interrupted (143 on SIGTERM, 129 on SIGHUP).\n"
      "Examples:\n"
      "  twice stress --handler check-then-act --threads 8\n"
      "  twice stress --handler unique-key+cas --deliveries 200000\n"
      "  twice stress --handler check-then-act --until-violation\n"
      "  twice stress --handler check-in-txn --engine postgres --isolation read-committed --until-violation",
      judged_list()));
  cmd->add_option("--handler", args->handler, "The handler (see `twice list`)")->required();
  cmd->add_option("--threads", args->threads,
                  fmt::format("Worker threads (at most {} on the PostgreSQL server twice starts, {} on MariaDB's)",
                              kPostgresMaxThreads, kMariadbMaxThreads))
      ->check(whole_number())
      ->check(CLI::Range(1, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--duplicates", args->duplicates, "Copies of each order delivered at once (at most --threads)")
      ->check(whole_number())
      ->check(CLI::Range(1, kMaxThreads))
      ->capture_default_str();
  auto* orders = cmd->add_option("--orders", args->orders, "Orders to pay (default: --deliveries / --duplicates)")
                     ->check(whole_number())
                     ->check(CLI::Range(1L, kMaxOrders));
  cmd->add_option("--deliveries", args->deliveries,
                  fmt::format("Deliveries to make, all copies counted (at most {} orders)", kMaxOrders))
      ->check(whole_number())
      ->check(CLI::Range(1L, kMaxDeliveries))
      ->capture_default_str()
      ->excludes(orders);
  cmd->add_option("--seconds", args->seconds, "Stop after this long even if orders remain (0: no limit)")
      ->check(seconds_value())
      ->capture_default_str();
  cmd->add_option("--redeliveries", args->redeliveries,
                  "Deliver an unacknowledged copy again, after a backoff (1 ms doubling to 32 ms, with jitter), up "
                  "to this many times: the gateway's retries")
      ->check(whole_number())
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_flag("--until-violation", args->until_violation,
                "Check after every round and stop at the first double_credit, lost_update or lost_payment "
                "(wrong_amount needs every order of an account: judged at the end); slower, a checker pass per round");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress line on stderr");
  cmd->add_option("--json", args->json, "Write the report as JSON to this file; - writes it to stdout (text to stderr)")
      ->check(path_given());
  add_engine_options(cmd, args->engines);
  cmd->callback([args, &action] { action = [args] { return run_stress_command(*args); }; });
  return cmd;
}

}  // namespace twice::cli
