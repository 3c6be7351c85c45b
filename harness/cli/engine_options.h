// The engine flags of `twice run` and `twice replay`: --engine
// sqlite|postgres|mariadb|all (repeatable), --isolation read-committed|
// repeatable-read|serializable (repeatable), --engine-url. They resolve to the
// list of engine choices to run, and own the PostgreSQL and MariaDB clusters
// (the servers twice starts, stopped when this object goes, also on an
// error's way out).
// Used from main's thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/engine_choice.h"
#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"
#include "results/model.h"
#include "twice/status.h"

namespace twice::cli {

struct EngineArgs {
  std::vector<std::string> engines;     // empty: sqlite
  std::vector<std::string> isolations;  // empty: each server engine's default level
  std::string url;
};

void add_engine_options(CLI::App* command, EngineArgs& args);

class EngineSelection {
 public:
  // Resolves the flags and starts what they need. A setup error (a server
  // that will not start, a URL that does not connect, an engine not built)
  // is one line in the Status.
  Status resolve(const EngineArgs& args);
  // In the order the flags name them; sqlite first for `all`.
  const std::vector<engine::EngineChoice>& choices() const { return choices_; }
  // The servers those choices run on, one per server engine, in the same
  // order (none for SQLite), as the reports name them: their version, the
  // settings a verdict depends on, and the URL without its password.
  std::vector<results::EngineServer> servers() const;

 private:
  std::unique_ptr<engine::PgCluster> postgres_;
  std::unique_ptr<engine::MariadbCluster> mariadb_;
  std::vector<engine::EngineChoice> choices_;
};

}  // namespace twice::cli
