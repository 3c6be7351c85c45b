// The database servers check_exactly_once() and check_run() run on when
// Options::engine names a server engine: one PostgreSQL and one MariaDB
// cluster per test process (per Options::engine_url), started on first use
// (initdb or mariadb-install-db, about a second) and stopped when the
// process exits, so that a test suite of many checks starts each server
// once. Internal to twice_testing.
// Thread-safe: checks may run at once; the clusters lease a database per run.
#pragma once

#include "engine/engine_choice.h"
#include "twice/status_or.h"
#include "twice/testing.h"

namespace twice::testing {

// The engine choice Options::engine / ::isolation / ::engine_url say, its
// server started. An unknown engine or level, or a server that cannot be
// had, is an error naming the field or the server's answer; the URL, there,
// without its password.
StatusOr<engine::EngineChoice> engine_of(const Options& options);

}  // namespace twice::testing
