#include "cli/engine_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/engine_url.h"
#include "explore/explorer.h"

namespace twice::cli {

void add_engine_options(CLI::App* command, EngineArgs& args) {
  command
      ->add_option("--engine", args.engines,
                   "Database engine (repeatable): sqlite (default), postgres, mariadb, or all (every engine and "
                   "isolation level)")
      ->check(CLI::IsMember({"sqlite", "postgres", "mariadb", "all"}));
  command
      ->add_option("--isolation", args.isolations,
                   "Isolation level of a server engine (repeatable; default: the engine's own, read-committed on "
                   "postgres, repeatable-read on mariadb)")
      ->check(CLI::IsMember({"read-committed", "repeatable-read", "serializable"}));
  command
      ->add_option("--engine-url", args.url,
                   "Use this server instead of starting one: postgres://user@host/db or "
                   "mysql://user[:password]@host[:port][?socket=/path]. Its user needs, on PostgreSQL, CREATE DATABASE "
                   "and the right to set deadlock_timeout (a superuser, or GRANT SET ON PARAMETER); on MariaDB, "
                   "PROCESS and ALL on the twice_% databases it creates (checked before any cell runs). Reports, "
                   "errors and replay commands name it without its password: set PGPASSWORD or MYSQL_PWD to run "
                   "the replays")
      ->check([](const std::string& url) {
        return url.empty() ? std::string("an empty URL: name the server, or leave out --engine-url to start one")
                           : std::string();
      });
}

Status EngineSelection::resolve(const EngineArgs& args) {
  choices_.clear();
  std::vector<std::string> engines = args.engines;
  if (engines.empty()) engines.push_back("sqlite");
  const bool all = std::find(engines.begin(), engines.end(), "all") != engines.end();
  if (all) engines = {"sqlite", "postgres", "mariadb"};
  std::vector<engine::Isolation> levels;
  for (const auto& name : args.isolations) levels.push_back(*engine::parse_isolation(name));
  const bool every_level = levels.empty() && all;
  if (every_level)
    levels = {engine::Isolation::kReadCommitted, engine::Isolation::kRepeatableRead, engine::Isolation::kSerializable};
  // Without --isolation, each engine runs at its own default level.
  auto levels_for = [&](engine::Isolation own) {
    return levels.empty() ? std::vector<engine::Isolation>{own} : levels;
  };
  if (!args.isolations.empty() && engines == std::vector<std::string>{"sqlite"})
    return Status::error("--isolation applies to a server engine; add --engine postgres or --engine mariadb");
  const bool has_pg = std::find(engines.begin(), engines.end(), "postgres") != engines.end();
  const bool has_maria = std::find(engines.begin(), engines.end(), "mariadb") != engines.end();
  if (!args.url.empty() && !has_pg && !has_maria)
    return Status::error("--engine-url names a server: add --engine postgres or --engine mariadb");
  if (!args.url.empty() && has_pg && has_maria)
    return Status::error("--engine-url names one server: run --engine postgres and --engine mariadb separately");
  for (const auto& name : engines) {
    if (name == "sqlite") {
      choices_.push_back(engine::EngineChoice{});
    } else if (name == "mariadb") {
      if (!args.url.empty() && !args.url.starts_with("mysql://"))
        return Status::error(
            fmt::format("--engine-url '{}' is not a MariaDB URL (mysql://user@host[:port][/db][?socket=/path])",
                        engine::engine_url_for_message(args.url)));
      if (!mariadb_) {
        mariadb_ = std::make_unique<engine::MariadbCluster>(args.url);
        if (Status s = mariadb_->ensure_started(); !s.ok()) return s;
      }
      for (auto level : levels_for(engine::Isolation::kRepeatableRead)) {
        engine::EngineChoice c;
        c.engine = Engine::kMariadb;
        c.isolation = level;
        c.mariadb = mariadb_.get();
        choices_.push_back(c);
      }
    } else if (name == "postgres") {
      if (!args.url.empty() && !args.url.starts_with("postgres://") && !args.url.starts_with("postgresql://"))
        return Status::error(fmt::format("--engine-url '{}' is not a PostgreSQL URL (postgres://user@host/db)",
                                         engine::engine_url_for_message(args.url)));
      if (!postgres_) {
        postgres_ = std::make_unique<engine::PgCluster>(args.url);
        if (Status s = postgres_->ensure_started(); !s.ok()) return s;
      }
      for (auto level : levels_for(engine::Isolation::kReadCommitted)) {
        engine::EngineChoice c;
        c.engine = Engine::kPostgres;
        c.isolation = level;
        c.postgres = postgres_.get();
        choices_.push_back(c);
      }
    }
  }
  // The same engine named twice runs once.
  std::vector<engine::EngineChoice> unique;
  for (const auto& c : choices_) {
    const bool seen = std::any_of(unique.begin(), unique.end(), [&](const engine::EngineChoice& u) {
      return u.cell_suffix() == c.cell_suffix();
    });
    if (!seen) unique.push_back(c);
  }
  choices_ = std::move(unique);
  return Status::OK();
}

std::vector<results::EngineServer> EngineSelection::servers() const {
  std::vector<results::EngineServer> out;
  for (const auto& c : choices_) {
    const std::optional<results::EngineServer> server = explore::engine_server(c);
    if (!server || std::any_of(out.begin(), out.end(), [&](const auto& s) { return s.engine == server->engine; }))
      continue;
    out.push_back(*server);
  }
  return out;
}

}  // namespace twice::cli
