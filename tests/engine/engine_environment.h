// The PostgreSQL and MariaDB servers the engine tests share: started once per
// test binary by a GoogleTest environment (main() in engine_environment.cpp),
// stopped after the last test. Tests call postgres() / mariadb() for the
// cluster; a test that starts servers of its own (postgres_server_test,
// mariadb_server_test) owns those.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <stdlib.h>
#include <string>
#include <thread>
#include <utility>

#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"
#include "run/simulate.h"

namespace twice::testing {

engine::PgCluster& postgres();
// The RunSpec::engine of a PostgreSQL run at `isolation` on the shared server.
engine::EngineChoice on_postgres(engine::Isolation isolation);

engine::MariadbCluster& mariadb();
// The RunSpec::engine of a MariaDB run at `isolation` on the shared server.
engine::EngineChoice on_mariadb(engine::Isolation isolation);

// One run of `handler_name` on `s` with `seed`, on `engine` (EngineChoice{}:
// SQLite); the run must start (simulate() succeeds).
run::RunResult run_on(const gateway::Scenario& s, const std::string& handler_name, std::uint64_t seed,
                      const engine::EngineChoice& engine);
// The invariants violated in any of seeds 1..n.
std::set<std::string> violations(const gateway::Scenario& s, const std::string& handler_name, int n,
                                 const engine::EngineChoice& engine);
std::string trace_text(const run::RunResult& r);

// Polls `done` every 50 ms for up to a minute: a server's guardian stops it in its own time.
template <class F>
bool eventually(F done) {
  for (int i = 0; i < 1200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

// `twice <args>` (TWICE_BINARY), stdout and stderr together.
struct CommandOutput {
  std::string output;
  int exit_code = -1;  // -1: killed by a signal, or could not start
};
CommandOutput twice_command(const std::string& args);

}  // namespace twice::testing
