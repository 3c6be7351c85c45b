// EngineChoice: which engine one run's database lives on, and how it is
// reached. The default is SQLite, exactly as before engines existed. Plain
// data; the clusters it points to are thread-safe and outlive the runs.
#pragma once

#include <string>

#include "engine/isolation.h"
#include "twice/engine.h"

namespace twice::engine {

class PgCluster;
class MariadbCluster;

struct EngineChoice {
  Engine engine = Engine::kSqlite;
  Isolation isolation = Isolation::kReadCommitted;  // server engines only
  PgCluster* postgres = nullptr;                    // set when engine is kPostgres
  MariadbCluster* mariadb = nullptr;                // set when engine is kMariadb

  bool is_sqlite() const { return engine == Engine::kSqlite; }
  // "" for SQLite (cell names stay as they were), "@postgres/read-committed" otherwise.
  std::string cell_suffix() const {
    if (is_sqlite()) return {};
    return "@" + std::string(engine_name(engine)) + "/" + std::string(isolation_name(isolation));
  }
};

}  // namespace twice::engine
