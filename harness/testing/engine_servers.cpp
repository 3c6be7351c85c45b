#include "testing/engine_servers.h"

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"

namespace twice::testing {
namespace {

// Process-wide: destroyed at exit, which stops the servers twice started.
struct Servers {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<engine::PgCluster>> postgres;   // by URL ("" = twice's own)
  std::map<std::string, std::unique_ptr<engine::MariadbCluster>> mariadb;
};

Servers& servers() {
  static Servers s;
  return s;
}

}  // namespace

StatusOr<engine::EngineChoice> engine_of(const Options& o) {
  engine::EngineChoice choice;
  if (o.engine.empty() || o.engine == "sqlite") {
    if (!o.isolation.empty())
      return Status::error(fmt::format("Options::isolation is \"{}\" but Options::engine is sqlite; set Options::engine "
                                       "to \"postgres\" or \"mariadb\"",
                                       o.isolation));
    if (!o.engine_url.empty())
      return Status::error("Options::engine_url names a server; set Options::engine to \"postgres\" or \"mariadb\"");
    return choice;
  }
  if (o.engine == "postgres") {
    choice.engine = Engine::kPostgres;
    choice.isolation = engine::Isolation::kReadCommitted;  // PostgreSQL's default
  } else if (o.engine == "mariadb") {
    choice.engine = Engine::kMariadb;
    choice.isolation = engine::Isolation::kRepeatableRead;  // InnoDB's default
  } else {
    return Status::error(
        fmt::format("Options::engine is \"{}\"; allowed: \"sqlite\", \"postgres\", \"mariadb\"", o.engine));
  }
  if (!o.isolation.empty()) {
    const auto level = engine::parse_isolation(o.isolation);
    if (!level)
      return Status::error(fmt::format(
          "Options::isolation is \"{}\"; allowed: \"read-committed\", \"repeatable-read\", \"serializable\"",
          o.isolation));
    choice.isolation = *level;
  }
  Servers& s = servers();
  std::lock_guard lock(s.mutex);
  Status started;
  if (choice.engine == Engine::kPostgres) {
    auto& cluster = s.postgres[o.engine_url];
    if (!cluster) cluster = std::make_unique<engine::PgCluster>(o.engine_url);
    started = cluster->ensure_started();
    choice.postgres = cluster.get();
  } else {
    auto& cluster = s.mariadb[o.engine_url];
    if (!cluster) cluster = std::make_unique<engine::MariadbCluster>(o.engine_url);
    started = cluster->ensure_started();
    choice.mariadb = cluster.get();
  }
  if (started.ok()) return choice;
  // The cluster's errors name the command's flag; here the URL is this field
  // (shown, as there, without its password).
  constexpr std::string_view kFlag = "--engine-url";
  std::string message = started.message();
  if (message.starts_with(kFlag)) message.replace(0, kFlag.size(), "Options::engine_url");
  return Status::error(message);
}

}  // namespace twice::testing
