// Engine: which database a handler's Db talks to. A handler asks Db::engine()
// to branch where the SQL dialects differ (INSERT OR IGNORE / ON CONFLICT DO
// NOTHING / INSERT IGNORE; BEGIN IMMEDIATE exists only on SQLite).
// Plain values; safe everywhere.
#pragma once

#include <string_view>

namespace twice {

enum class Engine {
  kSqlite,    // the embedded default: one database file per run
  kPostgres,  // a PostgreSQL server (started by twice, or --engine-url)
  kMariadb,   // a MariaDB (InnoDB) server
};

// "sqlite", "postgres", "mariadb": the names --engine takes and cells carry.
constexpr std::string_view engine_name(Engine e) {
  switch (e) {
    case Engine::kSqlite: return "sqlite";
    case Engine::kPostgres: return "postgres";
    case Engine::kMariadb: return "mariadb";
  }
  return "?";
}

}  // namespace twice
