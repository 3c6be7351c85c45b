#include "cli/blackbox_command.h"

#include <algorithm>
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
#include "cli/exit_status.h"
#include "explore/shell_quote.h"
#include "gateway/retry_profile.h"

namespace twice::cli {
namespace {

constexpr int kExitViolation = 1;

int usage(const std::string& message) {
  std::cerr << "twice: " << message << "\n";
  return kExitUsage;
}

std::string seconds(Micros m) { return fmt::format("{:.2f}s", static_cast<double>(m) / kSecond); }

std::string repeat_command(const BlackboxArgs& a, const gateway::Scenario& s, std::uint64_t seed, int kills) {
  using explore::shell_quote;
  std::string nemesis;
  if (!a.endpoint_command.empty())
    nemesis = fmt::format(" --endpoint-command {} --kills {} --kill-window {}", shell_quote(a.endpoint_command), kills,
                          a.kill_window_seconds);
  return fmt::format("twice run --endpoint {}{} --db {} --oracle {} --keys-dir {} --time-scale {} --scenario {} --seed {} --seeds 1",
                     shell_quote(a.endpoint), nemesis, shell_quote(a.db), shell_quote(a.oracle), shell_quote(a.keys_dir),
                     a.time_scale, shell_quote(s.source.empty() ? s.name : s.source), seed);
}

}  // namespace

void add_blackbox_options(CLI::App* run, BlackboxArgs& a) {
  run->add_option("--endpoint", a.endpoint,
                  "Black-box mode: play the gateway against a running service at this loopback URL "
                  "(http://127.0.0.1:PORT/path) and judge its database; see docs/black-box.md");
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
      ->check(CLI::Range(0, 1000));
  run->add_option("--kill-window", a.kill_window_seconds,
                  "Black-box mode: the kills land at moments drawn in the run's first this many seconds")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  run->add_option("--query-port", a.query_port,
                  "Black-box mode: serve the gateway's query API (WeChat query-order, alipay.trade.query, Stripe "
                  "PaymentIntent retrieve) on 127.0.0.1:PORT from the run's ledger (0: a free port)")
      ->check(CLI::Range(0, 65535));
  run->add_option("--service-log", a.service_log, "Black-box mode: where --endpoint-command's output goes")
      ->capture_default_str();
}

int run_blackbox_command(const BlackboxArgs& a, const std::vector<gateway::Scenario>& scenarios, int runs,
                         std::uint64_t first_seed, bool quiet) {
  StatusOr<blackbox::HttpEndpoint> endpoint = blackbox::parse_endpoint(a.endpoint);
  if (!endpoint.ok()) return usage(endpoint.status().message());
  if (a.json == "-") return usage("--json - is not available with --endpoint (the text goes to stdout); give a file");
  if (a.db.empty()) return usage("--endpoint needs --db: the service's database (a SQLite file, postgres://..., mysql://...)");
  if (a.oracle.empty()) return usage("--endpoint needs --oracle: the file of setup SQL and oracle queries (docs/black-box.md)");
  if (Status s = blackbox::check_database_is_local(a.db); !s.ok()) return usage(s.message());
  StatusOr<Schema> schema = blackbox::load_oracle(a.oracle);
  if (!schema.ok()) return usage(schema.status().message());
  // Every scenario must have a wire format before anything is sent.
  for (const auto& s : scenarios)
    if (!blackbox::has_wire_format(s.profile))
      return usage(fmt::format("{}: profile {} has no wire format in black-box mode; use a scenario whose profile is one of {}",
                               s.source.empty() ? s.name : s.source, s.profile, blackbox::wire_formats()));
  blackbox::WireKeys keys;
  if (Status s = blackbox::load_or_create_keys(a.keys_dir, keys); !s.ok()) return usage(s.message());
  const Micros min_timeout = static_cast<Micros>(a.min_timeout_seconds * kSecond);
  if (a.kills > 0 && a.endpoint_command.empty())
    return usage("--kills needs --endpoint-command: twice kills only a service it started itself");
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
    if (p.kind != blackbox::HttpOutcome::Kind::kAnswered)
      return usage(fmt::format("the service at {} did not answer within {} ({}); is it stuck? (--min-timeout to wait longer)",
                               a.endpoint, seconds(min_timeout), p.error));
  }
  std::unique_ptr<blackbox::ServiceDatabase> db;
  if (Status s = blackbox::ServiceDatabase::open(a.db, db); !s.ok()) return usage(s.message());

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
    std::cout << fmt::format("black-box: {} × {} ({} wire format), {} run{}, fault-plan seeds {}..{}\n", a.endpoint,
                             scenario.name, scenario.profile, runs, runs == 1 ? "" : "s", first_seed,
                             first_seed + static_cast<std::uint64_t>(runs) - 1);
    std::cout << fmt::format(
        "  not replayable: the seed fixes the fault plan (copies, delays, losses); the interleaving inside the service is "
        "the operating system's\n  time scale {} (retry gaps and delays divided by it), request timeout {}, keys in {}/\n",
        a.time_scale, seconds(blackbox::request_timeout(o)), a.keys_dir);
    if (service)
      std::cout << fmt::format("  twice started the service ({} in {}); nemesis: {} kill -9 per run in its first {}\n",
                               a.endpoint_command, a.service_log, kills, seconds(o.kill_window));
    std::cout << std::flush;
    std::map<std::string, int> runs_per_invariant;
    std::vector<std::uint64_t> failing;
    for (int i = 0; i < runs; ++i) {
      o.seed = first_seed + static_cast<std::uint64_t>(i);
      StatusOr<blackbox::BlackboxRun> r = blackbox::run_blackbox(o);
      if (!r.ok()) return usage(r.status().message());
      const auto& v = r->verdict.violations;
      std::map<std::string, bool> seen;
      for (const auto& x : v)
        if (!seen[x.invariant]) ++runs_per_invariant[x.invariant], seen[x.invariant] = true;
      if (!v.empty()) failing.push_back(o.seed);
      const std::string stats = fmt::format("{} requests, {} answered, {} acks, {} unanswered{}, {}", r->requests,
                                            r->answered, r->acks, r->timed_out,
                                            (r->forged ? fmt::format(", {} forged", r->forged) : "") + (r->kills ? fmt::format(", {} killed", r->kills) : ""), seconds(r->elapsed));
      if (v.empty()) {
        if (!quiet) std::cout << fmt::format("  run {} (seed {}): pass ({})\n", i + 1, o.seed, stats);
      } else {
        std::cout << fmt::format("  run {} (seed {}): {} ({})\n", i + 1, o.seed, v.front().invariant, stats);
        for (const auto& x : v) std::cout << fmt::format("    {}: {}\n", x.invariant, x.detail);
      }
      std::cout << std::flush;
      nlohmann::json j = {{"endpoint", a.endpoint}, {"scenario", scenario.name}, {"seed", o.seed},
                          {"requests", r->requests}, {"answered", r->answered}, {"acks", r->acks},
                          {"timed_out", r->timed_out}, {"forged", r->forged}, {"elapsed_us", r->elapsed},
                          {"kills", r->kills}, {"replayable", false}, {"fault_plan", r->fault_plan},
                          {"violations", nlohmann::json::array()}};
      for (const auto& x : v) j["violations"].push_back({{"invariant", x.invariant}, {"subject", x.subject}, {"detail", x.detail}});
      report.push_back(std::move(j));
    }
    std::cout << "  not judged:\n";
    for (const auto& line : blackbox::not_judged(scenario, kills > 0)) std::cout << "    " << line << "\n";
    if (runs_per_invariant.empty()) {
      std::cout << fmt::format("result: {} × {}: no violation in {} runs\n", a.endpoint, scenario.name, runs);
    } else {
      any_violation = true;
      std::string found;
      for (const auto& [inv, n] : runs_per_invariant) found += fmt::format("{}{} in {} of {} runs", found.empty() ? "" : ", ", inv, n, runs);
      std::cout << fmt::format("result: {} × {}: {}\n", a.endpoint, scenario.name, found);
      std::cout << fmt::format("  repeat the first failing run (as closely as real time allows):\n    {}\n",
                               repeat_command(a, scenario, failing.front(), kills));
    }
    std::cout << std::flush;
  }
  if (!a.json.empty()) {
    const std::string text = report.dump(2) + "\n";
    std::ofstream f(a.json);
    f << text;
    f.close();
    if (!f) return usage(fmt::format("{}: cannot write the JSON report", a.json));
  }
  return any_violation ? kExitViolation : 0;
}

}  // namespace twice::cli
