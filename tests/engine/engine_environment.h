// The PostgreSQL and MariaDB servers the engine tests share: started once per
// test binary by a GoogleTest environment (main() in engine_environment.cpp),
// stopped after the last test. Tests call postgres() / mariadb() for the
// cluster; a test that starts servers of its own (postgres_server_test,
// mariadb_server_test) owns those.
#pragma once

#include <string>

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

// `twice <args>` (TWICE_BINARY), stdout and stderr together.
struct CommandOutput {
  std::string output;
  int exit_code = -1;  // -1: killed by a signal, or could not start
};
CommandOutput twice_command(const std::string& args);

}  // namespace twice::testing
