#include "cli/blackbox_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "blackbox/blackbox_run.h"
#include "blackbox/http_post.h"
#include "blackbox/loopback.h"
#include "blackbox/oracle_file.h"
#include "blackbox/query_server.h"
#include "blackbox/service_database.h"
#include "blackbox/service_process.h"
#include "blackbox/wire_format.h"
#include "blackbox/wire_keys.h"
#include "check/violation.h"
#include "cli/argument_checks.h"
#include "cli/exit_status.h"
#include "cli/stop_lines.h"
#include "cli/stop_signal.h"
#include "engine/engine_url.h"
#include "explore/explorer.h"
#include "explore/shell_quote.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario_profile.h"
#include "reports/escape.h"

namespace twice::cli {
namespace {

constexpr int kExitViolation = 1;

// Messages may quote the service's log, its database or a URL given to us:
// made one inert line for the terminal.
int usage(const std::string& message) {
  std::cerr << "twice: " << reports::terminal_text(reports::printable_utf8(message)) << "\n";
  return kExitUsage;
}

// Text from the service (its database, its answers) for the terminal: valid
// UTF-8, on its line, no control characters.
std::string shown(std::string_view untrusted) { return reports::terminal_text(reports::printable_utf8(untrusted)); }

std::string seconds(Micros m) { return fmt::format("{:.2f}s", static_cast<double>(m) / kSecond); }

// Every option that shapes a run, so that the command repeats the same run.
// A --db URL's password is left out, as in `twice run`'s replay commands:
// a shell comment at the end names the variable the client library reads it from.
std::string repeat_command(const BlackboxArgs& a, const gateway::Scenario& s, std::uint64_t seed, int kills) {
  using explore::shell_quote;
  const Engine kind = a.db.starts_with("mysql://") ? Engine::kMariadb
                      : a.db.starts_with("postgres://") || a.db.starts_with("postgresql://") ? Engine::kPostgres
                                                                                              : Engine::kSqlite;
  const engine::PrintableUrl db = engine::printable_engine_url(kind, a.db);
  std::string options;
  if (!a.endpoint_command.empty())
    options += fmt::format(" --endpoint-command {} --service-log {} --kills {} --kill-window {}",
                           shell_quote(a.endpoint_command), shell_quote(a.service_log), kills, a.kill_window_seconds);
  if (a.query_port >= 0) options += fmt::format(" --query-port {}", a.query_port);
  return fmt::format(
      "twice run --endpoint {}{} --db {} --oracle {} --keys-dir {} --time-scale {} --min-timeout {} --scenario {} --seed {} "
      "--seeds 1",
      shell_quote(a.endpoint), options, shell_quote(db.url), shell_quote(a.oracle), shell_quote(a.keys_dir), a.time_scale,
      a.min_timeout_seconds, shell_quote(s.source.empty() ? s.name : s.source), seed) +
         explore::scenario_digest_args(s) +
         (db.password_variable.empty() ? ""
                                       : fmt::format("  # the URL's password is not printed: set {}", db.password_variable));
}

// Stops as `twice run`'s matrix mode does, a run here being what a cell is
// there. The first Ctrl-C lets the run under way finish and writes what is
// done. A second one ends the run under way at its next wait (its requests
// given up, nothing judged: dropped) and still writes the finished runs,
// within $TWICE_STOP_NOW_SECONDS (an alarm) or twice stops at once, writing
// nothing; so does a third. SIGTERM (a CI job's timeout) is taken the same
// way. The service twice started dies with it (service_process.h). Only
// async-signal-safe calls here.
std::atomic<bool> g_blackbox_stop{false};
StopCount g_blackbox_stops;  // cli/stop_signal.h
// The second stop, and the runs started and finished before it: what it says is what is written.
process::StopNow g_blackbox_stop_now;
constexpr unsigned kStopNowSeconds = 30;  // as `twice run`'s
unsigned g_stop_now_seconds = kStopNowSeconds;
std::atomic<int> g_stop_now_signal{SIGINT};

extern "C" void on_blackbox_stop_at_once(int sig) {
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

extern "C" void on_blackbox_overdue(int) {
  say_writing_overdue(g_stop_now_seconds);
  on_blackbox_stop_at_once(g_stop_now_signal.load());
}

extern "C" void on_blackbox_sigint(int sig) {
  const StopSignal kind = classify_stop(g_blackbox_stop, g_blackbox_stops);
  if (kind == StopSignal::kRepeat) return;  // `timeout`'s second copy of the last
  if (kind == StopSignal::kLater) {
    say_dropped(g_blackbox_stop_now.now().finished, "run");
    on_blackbox_stop_at_once(sig);
    return;
  }
  if (kind == StopSignal::kSecond) {
    g_stop_now_signal = sig;
    const process::StopNow::Counts counts = g_blackbox_stop_now.stop();
    std::signal(SIGALRM, on_blackbox_overdue);
    ::alarm(g_stop_now_seconds);
    say_stopping_now(counts, "run", sig, false);
    return;
  }
  static constexpr char kSay[] =
      "\ntwice: stopping after the run under way; the runs done will be written (Ctrl-C again to stop now)\n";
  static constexpr char kSayTerm[] =
      "\ntwice: terminated: stopping after the run under way; the runs done will be written\n";
  if (sig == SIGTERM) {
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSayTerm, sizeof kSayTerm - 1);
  } else {
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSay, sizeof kSay - 1);
  }
}

// "HTTP 200 ×3, 500 ×1"
std::string statuses_text(const std::map<int, int>& statuses) {
  std::string out;
  for (const auto& [status, n] : statuses) out += fmt::format("{}{} ×{}", out.empty() ? "HTTP " : ", ", status, n);
  return out;
}

// When no answer was a 2xx, what that usually means.
std::string non_2xx_hint(const blackbox::BlackboxRun& r, const BlackboxArgs& a) {
  if (r.answered == 0) return "";
  for (const auto& [status, n] : r.statuses)
    if (status >= 200 && status < 300) return "";
  if (r.statuses.size() == 1) {
    const int status = r.statuses.begin()->first;
    if (status == 404 || status == 405)
      return fmt::format("every answer was HTTP {}: is the path of {} right?", status, a.endpoint);
    if (status == 400 || status == 401 || status == 403)
      return fmt::format("every answer was HTTP {}: does the service check signatures with the keys in {}/?", status,
                         a.keys_dir);
    if (status >= 500)
      return fmt::format("every answer was HTTP {}: the service failed on every notify; see its log", status);
    return fmt::format("every answer was HTTP {}, none a 2xx", status);
  }
  return fmt::format("no answer was a 2xx ({})", statuses_text(r.statuses));
}

// --json's folder must exist before any run is spent.
Status check_json_path(const std::string& json) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file(json);
  const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  if (fs::is_directory(file, ec)) return Status::error(fmt::format("--json {}: is a folder; give a file name", json));
  if (!fs::is_directory(folder, ec))
    return Status::error(fmt::format("--json {}: no folder {}; create it or give another path", json, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    return Status::error(fmt::format("--json {}: cannot write in {}; give another path", json, folder.string()));
  return check_replaceable_file(json, "JSON report");
}

}  // namespace

void add_blackbox_options(CLI::App* run, BlackboxArgs& a) {
  run->add_option("--endpoint", a.endpoint,
                  "Black-box mode: play the gateway against a running service at this loopback URL "
                  "(http://127.0.0.1:PORT/path) and judge its database, 10 runs unless --seeds says otherwise; see "
                  "docs/black-box.md");
  run->add_option("--db", a.db, "Black-box mode: the service's database (a SQLite file, postgres://..., mysql://...)");
  run->add_option("--oracle", a.oracle, "Black-box mode: the oracle file (TOML: setup SQL and oracle queries)");
  run->add_option("--keys-dir", a.keys_dir, "Black-box mode: where the gateways' test keys and secrets are written for the service")
      ->capture_default_str();
  run->add_option("--time-scale", a.time_scale,
                  "Black-box mode: virtual time runs this many times faster than real time (retry gaps, delays)")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  run->add_option("--min-timeout", a.min_timeout_seconds,
                  "Black-box mode: seconds a request may take at least, however compressed the clock")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  run->add_option("--endpoint-command", a.endpoint_command,
                  "Black-box mode: start the service with this shell command (stopped when twice ends), so that the "
                  "nemesis can kill -9 it and start it again");
  run->add_option("--kills", a.kills, "Black-box mode, with --endpoint-command: kill -9s per run (default 1)")
      ->check(whole_number())->check(CLI::Range(0, 1000));
  run->add_option("--kill-window", a.kill_window_seconds,
                  "Black-box mode: the kills land at moments drawn in the run's first this many seconds")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  run->add_option("--query-port", a.query_port,
                  "Black-box mode: serve the gateway's query API (WeChat query-order, alipay.trade.query, Stripe "
                  "PaymentIntent retrieve) on 127.0.0.1:PORT from the run's ledger (0: a free port)")
      ->check(whole_number())->check(CLI::Range(0, 65535));
  run->add_option("--service-log", a.service_log,
                  "Black-box mode: where --endpoint-command's output goes (emptied when twice starts the service)")
      ->capture_default_str();
  run->add_option("--scenario-digest", a.scenario_digest,
                  "Black-box mode: the digest of the scenario file a printed repeat command was made on; a file "
                  "changed since is refused, since the seed would make another fault plan (twice replay takes it "
                  "too)");
}

int run_blackbox_command(const BlackboxArgs& a, const std::vector<gateway::Scenario>& scenarios, int runs,
                         std::uint64_t first_seed, bool quiet) {
  StatusOr<blackbox::HttpEndpoint> endpoint = blackbox::parse_endpoint(a.endpoint);
  if (!endpoint.ok()) return usage(endpoint.status().message());
  if (a.json == "-") return usage("--json - is not available with --endpoint (the text goes to stdout); give a file");
  if (!a.json.empty())
    if (Status s = check_json_path(a.json); !s.ok()) return usage(s.message());
  if (a.db.empty()) return usage("--endpoint needs --db: the service's database (a SQLite file, postgres://..., mysql://...)");
  if (a.oracle.empty()) return usage("--endpoint needs --oracle: the file of setup SQL and oracle queries (docs/black-box.md)");
  if (a.keys_dir.empty()) return usage("--keys-dir is empty: give the folder for the gateways' test keys (default twice-keys)");
  if (!(a.min_timeout_seconds >= 0.05 && a.min_timeout_seconds <= 3600.0))
    return usage(fmt::format("--min-timeout {} is not a number of seconds in 0.05..3600", a.min_timeout_seconds));
  if (!(a.time_scale >= 1.0 && a.time_scale <= 1e7))
    return usage(fmt::format("--time-scale {} is out of range; give 1 (real time) to 10000000", a.time_scale));
  if (!(a.kill_window_seconds >= 0.001 && a.kill_window_seconds <= 3600.0))
    return usage(fmt::format("--kill-window {} is not a number of seconds in 0.001..3600", a.kill_window_seconds));
  if (runs > 1 && first_seed > kLargestSeed - static_cast<std::uint64_t>(runs - 1))
    return usage(fmt::format("--seed {} --seeds {} runs past the largest seed {}; give a smaller --seed", first_seed, runs,
                             kLargestSeed));
  if (Status s = blackbox::check_database_is_local(a.db); !s.ok()) return usage(s.message());
  StatusOr<Schema> schema = blackbox::load_oracle(a.oracle);
  if (!schema.ok()) return usage(schema.status().message());
  // Every scenario must have a wire format before anything is sent.
  for (const auto& s : scenarios)
    if (!blackbox::has_wire_format(s.profile))
      return usage(fmt::format("{}: profile {} has no wire format in black-box mode; use a scenario whose profile is one of {}",
                               s.source.empty() ? s.name : s.source, s.profile, blackbox::wire_formats()));
  const Micros min_timeout = static_cast<Micros>(a.min_timeout_seconds * kSecond);
  if (a.kills > 0 && a.endpoint_command.empty())
    return usage("--kills needs --endpoint-command: twice kills only a service it started itself");
  blackbox::WireKeys keys;
  if (Status s = blackbox::load_or_create_keys(a.keys_dir, keys); !s.ok()) return usage(s.message());
  const int kills = a.kills >= 0 ? a.kills : (a.endpoint_command.empty() ? 0 : 1);
  // The query API first: a service may ask it as soon as it starts.
  // PayPal's webhooks name the certificate that checks them (PAYPAL-CERT-URL):
  // the query server serves it, on a free port when --query-port is not given.
  const bool paypal = std::any_of(scenarios.begin(), scenarios.end(), [](const auto& s) { return s.profile == "paypal"; });
  std::unique_ptr<blackbox::QueryServer> query;
  if (a.query_port >= 0 || paypal) {
    if (Status s = blackbox::QueryServer::start(std::max(a.query_port, 0), keys, query); !s.ok()) return usage(s.message());
    keys.paypal_cert_url = fmt::format("http://127.0.0.1:{}/v1/notifications/certs/CERT-twice", query->port());
    std::cout << fmt::format("query API on http://127.0.0.1:{} (GET /v3/pay/transactions/out-trade-no/{{no}}, "
                             "/gateway.do?method=alipay.trade.query, GET /v1/payment_intents/{{id}}, "
                             "GET /v1/notifications/certs/CERT-twice, POST /v1/notifications/verify-webhook-signature)\n",
                             query->port());
  }
  // The service twice starts (the keys exist by now, for a service that reads them at start).
  std::unique_ptr<blackbox::ServiceProcess> service;
  if (!a.endpoint_command.empty()) {
    if (Status s = blackbox::ServiceProcess::start(a.endpoint_command, *endpoint, a.service_log, 15 * kSecond, service);
        !s.ok())
      return usage(s.message());
  } else {
    // Is anybody there? Asked once, before the database is touched.
    const blackbox::HttpOutcome p = blackbox::probe(*endpoint, min_timeout);
    if (p.kind == blackbox::HttpOutcome::Kind::kRefused)
      return usage(fmt::format("nothing listens on {} (connection refused); start the service first", a.endpoint));
    if (p.kind == blackbox::HttpOutcome::Kind::kBroken)
      return usage(fmt::format("the service at {} gave no HTTP answer ({}); is an HTTP server listening on that port?",
                               a.endpoint, p.error));
    if (p.kind != blackbox::HttpOutcome::Kind::kAnswered)
      return usage(fmt::format("the service at {} did not answer within {} ({}); is it stuck? (--min-timeout to wait longer)",
                               a.endpoint, seconds(min_timeout), p.error));
  }
  std::unique_ptr<blackbox::ServiceDatabase> db;
  if (Status s = blackbox::ServiceDatabase::open(a.db, db); !s.ok()) return usage(s.message());

  // From here on a run's results are never lost: an error, a service that
  // stops answering, or Ctrl-C ends the test after the runs done, which are
  // printed and written to --json.
  g_blackbox_stop = false;
  Micros progress_every = 60 * kSecond;
  if (const char* every = std::getenv("TWICE_PROGRESS_SECONDS"))
    progress_every = static_cast<Micros>(std::clamp(std::atoi(every), 1, 3600)) * kSecond;
  if (const char* seconds = std::getenv("TWICE_STOP_NOW_SECONDS"))
    g_stop_now_seconds = static_cast<unsigned>(std::clamp(std::atoi(seconds), 1, 3600));
  std::signal(SIGINT, on_blackbox_sigint);
  std::signal(SIGTERM, on_blackbox_sigint);
  enum class Stop { kNone, kInterrupted, kError };
  Stop stop = Stop::kNone;
  std::string stop_message;
  int runs_done = 0;
  nlohmann::json report = nlohmann::json::array();
  bool any_violation = false;
  for (const auto& scenario : scenarios) {
    blackbox::BlackboxOptions o;
    o.endpoint = *endpoint;
    o.scenario = &scenario;
    o.schema = &*schema;
    o.database = db.get();
    o.keys = &keys;
    o.time_scale = a.time_scale;
    o.min_timeout = min_timeout;
    o.process = service.get();
    o.query_server = query.get();
    o.kills = kills;
    o.kill_window = static_cast<Micros>(a.kill_window_seconds * kSecond);
    o.stop_now = &g_blackbox_stop_now;
    // A run waits out the gateway's retry schedule (a quarter of an hour at
    // the default time scale when nothing is acknowledged): said once a
    // minute, so that it is not silent ($TWICE_PROGRESS_SECONDS).
    if (!quiet) {
      o.progress_every = progress_every;
      o.on_progress = [runs, first_seed](Micros elapsed, const blackbox::BlackboxRun& p) {
        std::string so_far = fmt::format("{} request{}, {} answered", p.requests, p.requests == 1 ? "" : "s", p.answered);
        if (!p.statuses.empty()) so_far += fmt::format(" ({})", statuses_text(p.statuses));
        so_far += fmt::format(", {} ack{}", p.acks, p.acks == 1 ? "" : "s");
        if (p.refused > 0) so_far += fmt::format(", {} refused", p.refused);
        if (p.timed_out > 0) so_far += fmt::format(", {} timed out", p.timed_out);
        std::cerr << fmt::format("  run {} (seed {}) of {}: {} so far: {}; the gateway retries on its schedule\n",
                                 p.seed - first_seed + 1, p.seed, runs, seconds(elapsed), so_far)
                  << std::flush;
      };
    }
    std::cout << fmt::format("black-box: {} × {} ({} wire format), {} run{}, fault-plan seeds {}..{}\n", shown(a.endpoint),
                             shown(scenario.name), scenario.profile, runs, runs == 1 ? "" : "s", first_seed,
                             first_seed + static_cast<std::uint64_t>(runs) - 1);
    std::cout << fmt::format(
        "  not replayable: the seed fixes the fault plan (copies, delays, losses); the interleaving inside the service is "
        "the operating system's\n  time scale {} (retry gaps and delays divided by it), request timeout {} (the whole "
        "request), keys in {}/\n",
        a.time_scale, seconds(blackbox::request_timeout(o)), shown(a.keys_dir));
    // The figures the run plays in place of the profile's, as `twice list` says them.
    if (const std::string departs = gateway::gateway_departures(scenario); !departs.empty())
      std::cout << "  " << departs << "\n";
    if (service)
      std::cout << fmt::format("  twice started the service ({}, its output in {}); {}\n", shown(a.endpoint_command),
                               shown(a.service_log),
                               kills > 0 ? fmt::format("nemesis: {} kill -9{} per run in its first {}", kills,
                                                       kills == 1 ? "" : "s", seconds(o.kill_window))
                                         : "nemesis off (--kills 0)");
    std::cout << std::flush;
    std::map<std::string, int> runs_per_invariant;
    std::vector<std::uint64_t> failing;
    int done = 0;
    for (int i = 0; i < runs; ++i) {
      if (g_blackbox_stop || !g_blackbox_stop_now.start()) {
        stop = Stop::kInterrupted;
        break;
      }
      o.seed = first_seed + static_cast<std::uint64_t>(i);
      StatusOr<blackbox::BlackboxRun> r = blackbox::run_blackbox(o);
      // Under way when a stop now came: dropped, whatever it became after
      // (cut short, or ended and judged), as the stop said.
      if (!g_blackbox_stop_now.finish()) {
        stop = Stop::kInterrupted;
        break;
      }
      if (!r.ok()) {
        stop = Stop::kError;
        const std::string& why = r.status().message();
        const bool service_gone = why.starts_with("nothing listens") || why.starts_with("the service at");
        if (runs_done == 0)
          stop_message = why + (why.starts_with("nothing listens") && !service ? "; start the service first" : "");
        else
          stop_message = fmt::format("{} in run {} (seed {}) of {}, after {} finished run{}: {}; the finished runs are kept{}",
                                     service_gone ? "the service stopped answering mid-test" : "the test stopped", i + 1,
                                     o.seed, scenario.name, runs_done, runs_done == 1 ? "" : "s", why,
                                     a.json.empty() ? "" : " in " + a.json);
        break;
      }
      // An oracle query that fails, or returns too few columns, is the oracle
      // file's mistake, not the service's: an input error, before more runs
      // are spent, not an oracle_error "found" in every run.
      if (const auto bad = std::find_if(r->verdict.violations.begin(), r->verdict.violations.end(),
                                        [](const check::Violation& x) { return x.invariant == "oracle_error"; });
          bad != r->verdict.violations.end()) {
        stop = Stop::kError;
        stop_message = fmt::format("{}: {}; fix the query in the oracle file (its columns: twice/schema.h, "
                                   "docs/black-box.md){}",
                                   a.oracle, bad->detail,
                                   runs_done == 0 ? std::string()
                                                  : fmt::format("; the {} finished run{} before it are kept{}",
                                                                runs_done, runs_done == 1 ? "" : "s",
                                                                a.json.empty() ? "" : " in " + a.json));
        break;
      }
      ++done;
      ++runs_done;
      const auto& v = r->verdict.violations;
      std::map<std::string, bool> seen;
      for (const auto& x : v)
        if (!seen[x.invariant]) ++runs_per_invariant[x.invariant], seen[x.invariant] = true;
      if (!v.empty()) failing.push_back(o.seed);
      std::string stats = fmt::format("{} requests, {} answered", r->requests, r->answered);
      if (!r->statuses.empty()) stats += fmt::format(" ({})", statuses_text(r->statuses));
      stats += fmt::format(", {} acks, {} timed out", r->acks, r->timed_out);
      if (r->ended_late > 0) stats += fmt::format(" ({} ended later, waited {})", r->ended_late, seconds(r->drained));
      if (r->broken > 0) stats += fmt::format(", {} broken", r->broken);
      if (r->refused > 0) stats += fmt::format(", {} refused", r->refused);
      if (r->forged > 0) stats += fmt::format(", {} forged", r->forged);
      if (r->kills > 0) stats += fmt::format(", {} killed", r->kills);
      stats += ", " + seconds(r->elapsed);
      if (v.empty()) {
        if (!quiet) std::cout << fmt::format("  run {} (seed {}): pass ({})\n", i + 1, o.seed, stats);
      } else {
        std::cout << fmt::format("  run {} (seed {}): {} ({})\n", i + 1, o.seed, shown(v.front().invariant), stats);
        for (const auto& x : v) std::cout << fmt::format("    {}: {}\n", shown(x.invariant), shown(x.detail));
      }
      if (const std::string hint = non_2xx_hint(*r, a); !hint.empty() && (!quiet || !v.empty()))
        std::cout << "    " << shown(hint) << "\n";
      if (r->broken > 0 && (!quiet || !v.empty()))
        std::cout << fmt::format("    a broken answer: {}\n", shown(r->broken_example));
      std::cout << std::flush;
      nlohmann::json statuses = nlohmann::json::object();
      for (const auto& [status, n] : r->statuses) statuses[std::to_string(status)] = n;
      nlohmann::json j = {{"endpoint", a.endpoint}, {"scenario", scenario.name}, {"seed", o.seed},
                          {"requests", r->requests}, {"answered", r->answered}, {"statuses", statuses},
                          {"acks", r->acks}, {"timed_out", r->timed_out}, {"ended_late", r->ended_late},
                          {"still_running", r->still_running}, {"broken", r->broken}, {"refused", r->refused},
                          {"forged", r->forged}, {"elapsed_us", r->elapsed}, {"kills", r->kills},
                          {"replayable", false}, {"fault_plan", r->fault_plan},
                          {"violations", nlohmann::json::array()}};
      for (const auto& x : v) j["violations"].push_back({{"invariant", x.invariant}, {"subject", x.subject}, {"detail", x.detail}});
      report.push_back(std::move(j));
      if (r->still_running > 0) {
        // Its late writes would land in the next run's database.
        stop = Stop::kError;
        stop_message = fmt::format(
            "the service at {} was still working on {} request{} twice gave up on, {} after run {} (seed {}) of {}; "
            "stopping, since the next run's database would not be its own; the finished runs are kept{}",
            a.endpoint, r->still_running, r->still_running == 1 ? "" : "s", seconds(o.drain_timeout), i + 1, o.seed,
            scenario.name, a.json.empty() ? "" : " in " + a.json);
        break;
      }
    }
    if (done > 0 || stop == Stop::kNone) {
      std::cout << "  not judged:\n";
      for (const auto& line : blackbox::not_judged(scenario, kills > 0)) std::cout << "    " << line << "\n";
      const std::string cut = done < runs ? fmt::format(" (stopped after {} of {} runs)", done, runs) : "";
      if (runs_per_invariant.empty()) {
        std::cout << fmt::format("result: {} × {}: no violation in {} run{}{}\n", shown(a.endpoint), shown(scenario.name),
                                 done, done == 1 ? "" : "s", cut);
      } else {
        any_violation = true;
        std::string found;
        for (const auto& [inv, n] : runs_per_invariant)
          found += fmt::format("{}{} in {} of {} runs", found.empty() ? "" : ", ", shown(inv), n, done);
        std::cout << fmt::format("result: {} × {}: {}{}\n", shown(a.endpoint), shown(scenario.name), found, cut);
        std::cout << fmt::format("  repeat the first failing run (as closely as real time allows):\n    {}\n",
                                 shown(repeat_command(a, scenario, failing.front(), kills)));
      }
    }
    std::cout << std::flush;
    if (stop != Stop::kNone) break;
  }
  // With no stop taken, a Ctrl-C from here ends twice at once, as any
  // program's; after one, the next is taken as its handler says (a third
  // stops at once, saying what that drops).
  if (!g_blackbox_stop.load()) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  if (!a.json.empty() && (runs_done > 0 || stop == Stop::kNone)) {
    // Text from the service's database may be any bytes: invalid UTF-8 becomes U+FFFD.
    const std::string text = report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::ofstream f(a.json);
    f << text;
    f.close();
    if (!f) return usage(fmt::format("{}: cannot write the JSON report", a.json));
  }
  if (stop == Stop::kInterrupted) {
    if (runs_done == 0)  // nothing to write: an earlier file there is not this test's
      std::cerr << fmt::format("twice: stopped before any run finished{}\n",
                               a.json.empty() ? "" : "; nothing written to " + a.json);
    else
      std::cerr << fmt::format("twice: stopped after {} run{}{}\n", runs_done, runs_done == 1 ? "" : "s",
                               a.json.empty() ? "" : "; they are in " + a.json);
    return kExitInterrupted;
  }
  if (stop == Stop::kError) {
    std::cerr << "twice: " << shown(stop_message) << "\n";
    return any_violation ? kExitViolation : kExitUsage;
  }
  return any_violation ? kExitViolation : 0;
}

}  // namespace twice::cli
