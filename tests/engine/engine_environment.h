// The PostgreSQL server the engine tests share: started once per test binary
// by a GoogleTest environment (main() in engine_environment.cpp), stopped
// after the last test. Tests call postgres() for the cluster; a test that
// starts servers of its own (postgres_server_test) owns those.
#pragma once

#include "engine/pg_cluster.h"
#include "run/simulate.h"

namespace twice::testing {

engine::PgCluster& postgres();
// The RunSpec::engine of a PostgreSQL run at `isolation` on the shared server.
engine::EngineChoice on_postgres(engine::Isolation isolation);

}  // namespace twice::testing
