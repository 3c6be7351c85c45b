// `twice run --endpoint URL`: black-box mode, a running service in any
// language tested over real HTTP (see blackbox/blackbox_run.h), as options of
// `twice run`. main() adds the options before parsing and, when --endpoint
// was given, hands the run to run_blackbox_command() instead of the matrix.
// Called from main's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gateway/scenario.h"

namespace twice::cli {

struct BlackboxArgs {
  std::string endpoint;
  std::string db;
  std::string oracle;
  std::string keys_dir = "twice-keys";
  double time_scale = 100.0;
  double min_timeout_seconds = 1.0;
  std::string endpoint_command;  // twice starts the service, and may kill it
  int kills = -1;               // per run; -1: 1 with --endpoint-command, else none
  double kill_window_seconds = 0.5;
  std::string service_log = "twice-service.log";
  int query_port = -1;  // -1: no query API
  // --scenario-digest: the digest of the scenario file a printed repeat
  // command was made on; checked (against the one scenario) before anything runs.
  std::string scenario_digest;
  std::string json;  // run's own --json: a file ("-" is refused: the text goes to stdout)
};

// Adds --endpoint, --db, --oracle, --keys-dir, --time-scale, --min-timeout,
// --endpoint-command, --kills, --kill-window, --service-log, --query-port,
// --scenario-digest to `run`.
void add_blackbox_options(CLI::App* run, BlackboxArgs& args);

// Runs each scenario `runs` times (fault-plan seeds first_seed, first_seed+1,
// ...) against the endpoint and prints a verdict per run and per scenario.
// Returns the exit status: 0 no violation, 1 some run shows one, 2 a usage or
// input error (one line on stderr: a non-loopback URL, nothing listening, a
// service that never answers, a bad oracle file), 130 interrupted (SIGINT or
// SIGTERM: the run under way finishes first; a second signal stops at once).
// A test that stops early (interrupted, or the service stopped answering)
// still prints and writes (--json) the runs it finished, and returns 1 when
// one of them shows a violation. Installs its own SIGINT and SIGTERM
// handlers while the runs go, and restores the defaults.
int run_blackbox_command(const BlackboxArgs& args, const std::vector<gateway::Scenario>& scenarios, int runs,
                         std::uint64_t first_seed, bool quiet);

}  // namespace twice::cli
