#include "cli/stress_command.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/violation.h"
#include "cli/engine_options.h"
#include "cli/exit_status.h"
#include "stress/stress_runner.h"
#include "twice/handler.h"
#include "twice_tool_version.h"

namespace twice::cli {
namespace {

constexpr int kExitViolations = 1;

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

std::atomic<bool> g_interrupted{false};
extern "C" void on_stress_sigint(int) { g_interrupted = true; }

std::string known_handlers() {
  std::string names;
  for (const auto* h : HandlerRegistry::instance().all()) names += (names.empty() ? "" : ", ") + h->name;
  return names;
}

std::string percent(double rate) { return fmt::format("{:.3f}%", 100.0 * rate); }

// The report as JSON (docs/report-schema.md): the same figures as the text,
// and the first kViolationsListed violations.
nlohmann::json report_json(const stress::StressReport& r) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : r.verdict.violations) {
    if (violations.size() == kViolationsListed) break;
    violations.push_back({{"name", v.invariant}, {"subject", v.subject}, {"detail", v.detail}});
  }
  return {{"schema_version", 1},
          {"tool", "twice"},
          {"tool_version", TWICE_TOOL_VERSION},
          {"handler", r.handler},
          {"database", r.database},
          {"redeliveries", r.redeliveries},
          {"threads", r.threads},
          {"duplicates", r.duplicates},
          {"orders_planned", r.orders_planned},
          {"orders_run", r.orders_run},
          {"deliveries", r.deliveries},
          {"acked", r.acked},
          {"seconds", static_cast<double>(r.elapsed) / kSecond},
          {"deliveries_per_second", r.deliveries_per_second()},
          {"stopped_by", r.stopped_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopped_by)},
          {"violations_per_invariant", r.violations_per_invariant},
          {"violation_count", r.verdict.violations.size()},
          {"violating_orders", r.violating_orders},
          {"violation_rate", r.violation_rate()},
          {"violations", violations}};
}

void print_report(const stress::StressReport& r, std::ostream& out) {
  const double seconds = static_cast<double>(r.elapsed) / kSecond;
  out << fmt::format("twice stress: {} on {} threads, {} copies of each order released together, {}\n", r.handler,
                     r.threads, r.duplicates, r.database);
  out << fmt::format("  deliveries   {} ({} orders × {}){}\n", r.deliveries, r.orders_run, r.duplicates,
                     r.stopped_by.empty() ? "" : fmt::format(", stopped by {} ({} orders planned)", r.stopped_by,
                                                             r.orders_planned));
  if (r.redeliveries == 0)
    out << fmt::format("  replies      {} acked, {} not acked (the gateway would retry those)\n", r.acked,
                       r.deliveries - r.acked);
  else
    out << fmt::format("  replies      {} acked, {} not acked after {} redeliveries of unacked copies\n", r.acked,
                       r.deliveries - r.acked, r.redeliveries);
  out << fmt::format("  throughput   {:.0f} deliveries/s ({:.2f} s)\n", r.deliveries_per_second(), seconds);
  if (r.verdict.violations.empty()) {
    out << fmt::format("  verdict      no violation in {} orders\n", r.orders_run);
    return;
  }
  // double_credit and lost_payment name an order, lost_update an account.
  std::set<std::string> accounts;
  for (const auto& acc : r.verdict.accounts) accounts.insert(acc.user);
  std::set<std::string> accounts_hit;
  for (const auto& [invariant, count] : r.violations_per_invariant) {
    long orders = 0, of_accounts = 0;
    for (const auto& v : r.verdict.violations) {
      if (v.invariant != invariant) continue;
      if (v.subject.starts_with("S-")) ++orders;
      if (accounts.count(v.subject)) {
        ++of_accounts;
        accounts_hit.insert(v.subject);
      }
    }
    std::string what = std::to_string(count);
    if (orders == count)
      what = fmt::format("{} orders ({} of orders)", count, percent(static_cast<double>(count) / std::max(r.orders_run, 1L)));
    else if (of_accounts == count)
      what = fmt::format("{} of {} accounts", count, accounts.size());
    out << fmt::format("  violation    {:<16} {}\n", invariant, what);
  }
  const auto& first = r.verdict.violations.front();
  out << fmt::format("  e.g.         {}\n", first.detail);
  out << fmt::format("  verdict      {} of {} orders violated ({}){}\n", r.violating_orders, r.orders_run,
                           percent(r.violation_rate()),
                           accounts_hit.empty() ? "" : fmt::format(", and {} accounts", accounts_hit.size()));
}

int run_stress_command(const StressArgs& a) {
  const HandlerInfo* handler = HandlerRegistry::instance().find(a.handler);
  if (!handler) {
    std::cerr << fmt::format("twice: unknown handler '{}'; known: {}\n", a.handler, known_handlers());
    return kExitUsage;
  }
  if (a.duplicates > a.threads) {
    std::cerr << fmt::format("twice: --duplicates {} exceeds --threads {}: each copy needs its own thread\n",
                             a.duplicates, a.threads);
    return kExitUsage;
  }

  // Opened before the run, so that a file that cannot be written fails now, not after a minute of stress.
  std::ofstream json_file;
  if (!a.json.empty() && a.json != "-") {
    json_file.open(a.json);
    if (!json_file) {
      std::cerr << fmt::format("twice: stress: cannot write --json {}: {}\n", a.json, std::strerror(errno));
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
  options.stop = &g_interrupted;
  const bool tty = ::isatty(STDERR_FILENO) && !a.quiet;
  if (tty) {
    options.on_progress = [](const stress::StressProgress& p) {
      fmt::print(stderr, "\r\x1b[K[{}/{} deliveries, {:.1f} s]", p.deliveries_done, p.deliveries_planned,
                 static_cast<double>(p.elapsed) / kSecond);
      std::fflush(stderr);
    };
  }

  // The servers it starts are stopped when `engines` goes, on every way out.
  EngineSelection engines;
  if (Status s = engines.resolve(a.engines); !s.ok()) {
    std::cerr << "twice: stress: " << s.message() << "\n";
    return kExitUsage;
  }
  for (const auto& choice : engines.choices()) {
    if (handler->make()->schema().setup_sql_for(choice.engine).empty()) {
      std::cerr << fmt::format(
          "twice: stress: handler {} has no schema for {} (Schema::{}_setup_sql); run it with --engine sqlite\n",
          handler->name, engine_name(choice.engine), engine_name(choice.engine));
      return kExitUsage;
    }
  }

  g_interrupted = false;
  std::signal(SIGINT, on_stress_sigint);
  int exit_code = 0;
  // One run per engine and level, one after another, each with its report;
  // with several, the JSON is an array of their reports.
  nlohmann::json reports = nlohmann::json::array();
  std::ostream& text = a.json == "-" ? std::cerr : std::cout;
  for (const auto& choice : engines.choices()) {
    options.engine = choice;
    stress::StressReport report;
    const Status status = stress::run_stress(options, report);
    if (tty) {
      fmt::print(stderr, "\r\x1b[K");
      std::fflush(stderr);
    }
    if (!status.ok()) {
      std::signal(SIGINT, SIG_DFL);
      std::cerr << "twice: stress: " << status.message() << "\n";
      return kExitUsage;
    }
    print_report(report, text);
    reports.push_back(report_json(report));
    if (report.stopped_by == "interrupted") {
      exit_code = kExitInterrupted;
      break;
    }
    if (!report.verdict.violations.empty()) exit_code = kExitViolations;
  }
  std::signal(SIGINT, SIG_DFL);
  if (!a.json.empty()) {
    const nlohmann::json& doc = reports.size() == 1 ? reports[0] : reports;
    const std::string json = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (a.json == "-") {
      std::cout << json << std::flush;
    } else {
      json_file << json;
      if (!json_file.flush()) {
        std::cerr << fmt::format("twice: stress: cannot write {}: {}\n", a.json, std::strerror(errno));
        return kExitUsage;
      }
    }
  }
  return exit_code;
}

}  // namespace

CLI::App* add_stress_command(CLI::App& app, std::function<int()>& action) {
  auto args = std::make_shared<StressArgs>();
  auto* cmd = app.add_subcommand(
      "stress",
      "Fire duplicate callbacks at a handler from real threads against a SQLite file in WAL mode or a database server");
  cmd->footer(
      "\nWorkers take the orders in rounds; the copies of one order wait on a barrier and are released together.\n"
      "The run ends after --orders (or --deliveries) or --seconds, whichever comes first; then the same checker\n"
      "as `twice run` reads the database. Not replayable: use `twice run` to find and replay a bug, this to see\n"
      "it happen on real threads and how often.\n"
      "--engine postgres|mariadb runs the same on a server (started by twice, or --engine-url), each thread on its\n"
      "own blocking connection at --isolation; with several engines or levels, one run and report for each.\n"
      "Exit status: 0 no violation; 1 violations found; 2 a usage or setup error.\n"
      "Examples:\n"
      "  twice stress --handler check-then-act --threads 8\n"
      "  twice stress --handler unique-key+cas --deliveries 200000\n"
      "  twice stress --handler check-then-act --until-violation\n"
      "  twice stress --handler check-in-txn --engine postgres --isolation read-committed --until-violation");
  cmd->add_option("--handler", args->handler, "The handler (see `twice list`)")->required();
  cmd->add_option("--threads", args->threads, "Worker threads")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--duplicates", args->duplicates, "Copies of each order delivered at once (at most --threads)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  auto* orders = cmd->add_option("--orders", args->orders, "Orders to pay (default: --deliveries / --duplicates)")
                     ->check(CLI::Range(1L, 100'000'000L));
  cmd->add_option("--deliveries", args->deliveries, "Deliveries to make, all copies counted")
      ->check(CLI::Range(1L, 1'000'000'000L))
      ->capture_default_str()
      ->excludes(orders);
  cmd->add_option("--seconds", args->seconds, "Stop after this long even if orders remain (0: no limit)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--redeliveries", args->redeliveries,
                  "Deliver a copy again, at once, while the handler does not acknowledge it, up to this many times "
                  "(the gateway's retries; a 5xx on a serialization failure or deadlock is how a handler asks for one)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_flag("--until-violation", args->until_violation,
                "Check after every round and stop at the first violation (slower: a checker pass per round)");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress line on stderr");
  cmd->add_option("--json", args->json,
                  "Write the report as JSON to this file; - writes it to stdout (the text then goes to stderr)");
  add_engine_options(cmd, args->engines);
  cmd->callback([args, &action] { action = [args] { return run_stress_command(*args); }; });
  return cmd;
}

}  // namespace twice::cli
