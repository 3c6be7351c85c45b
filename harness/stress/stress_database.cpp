#include "stress/stress_database.h"

#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"
#include "env/seed.h"
#include "env/sqlite_db.h"
#include "stress/real_env.h"
#include "stress/server_worker_db.h"
#include "stress/temp_folder.h"

namespace twice::stress {
namespace fs = std::filesystem;
namespace {


class SqliteStressDatabase final : public StressDatabase {
 public:
  explicit SqliteStressDatabase(Micros busy_timeout) : busy_timeout_(busy_timeout) {}
  Status open(const std::string& temp_parent) {
    if (Status s = folder_.create(temp_parent); !s.ok()) return s;
    path_ = (folder_.path() / "stress.db").string();
    setup_ = std::make_unique<RealDb>(path_, busy_timeout_);
    if (!setup_->status().ok()) return setup_->status();
    raw_ = std::make_unique<env::SqliteConnection>(setup_->connection());
    return Status::OK();
  }
  Status seed(const Schema& schema, const std::vector<StressOrder>& orders) override {
    std::vector<env::SeedOrder> seed;
    seed.reserve(orders.size());
    for (const auto& o : orders) seed.push_back({o.order_no, o.user, o.amount, o.currency});
    return env::seed_database(setup_->connection(), schema, seed);
  }
  std::unique_ptr<WorkerDb> open_worker() override { return std::make_unique<RealDb>(path_, busy_timeout_); }
  env::RawConnection& checker() override { return *raw_; }
  std::string description() const override { return "SQLite WAL file"; }

 private:
  Micros busy_timeout_;
  TempFolder folder_;  // declared first: removed after the connections below close
  std::string path_;
  std::unique_ptr<RealDb> setup_;
  std::unique_ptr<env::SqliteConnection> raw_;
};

// The seed as statements, in seed_database()'s order: each order, and a
// user's account after that user's first order.
std::vector<engine::PgDatabase::Statement> seed_statements(const Schema& schema, const std::vector<StressOrder>& orders) {
  std::vector<engine::PgDatabase::Statement> out;
  out.reserve(orders.size() + 64);
  std::set<std::string> users;
  for (const auto& o : orders) {
    out.push_back({schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}});
    if (users.insert(o.user).second) out.push_back({schema.insert_account_sql, {o.user}});
  }
  return out;
}

// Runs from one stress run to the next start from a fresh schema: the key
// names this run alone.
std::string fresh_key() {
  static std::atomic<long> runs{0};
  return fmt::format("stress run {}", ++runs);
}

// One worker's blocking connection to a leased server database.
std::unique_ptr<WorkerDb> open_worker_on(engine::PgDatabase& db, engine::Isolation isolation, Micros timeout) {
  return std::make_unique<PgWorkerDb>(db.conninfo(), isolation, timeout);
}
std::unique_ptr<WorkerDb> open_worker_on(engine::MariadbDatabase& db, engine::Isolation isolation, Micros timeout) {
  return std::make_unique<MariadbWorkerDb>(db.address(), db.name(), isolation, timeout);
}

std::string server_name(Engine engine) { return engine == Engine::kPostgres ? "PostgreSQL" : "MariaDB (InnoDB)"; }

// A database leased from a server engine's cluster (PgCluster or
// MariadbCluster), given back when the run ends.
template <class Cluster, class Database>
class ServerStressDatabase final : public StressDatabase {
 public:
  ServerStressDatabase(Engine engine, Cluster& cluster, engine::Isolation isolation, Micros busy_timeout)
      : engine_(engine), cluster_(cluster), isolation_(isolation), busy_timeout_(busy_timeout) {}
  ~ServerStressDatabase() override {
    if (database_ && !discarded_) cluster_.give_back(std::move(database_));
  }
  void discard() override { discarded_ = true; }
  Status open() {
    if (Status s = cluster_.ensure_started(); !s.ok()) return s;
    return cluster_.lease(database_);
  }
  Status seed(const Schema& schema, const std::vector<StressOrder>& orders) override {
    const std::string& setup = schema.setup_sql_for(engine_);
    if (setup.empty())
      return Status::error(fmt::format("the handler has no {} schema (Schema::{}_setup_sql)", server_name(engine_),
                                       engine_name(engine_)));
    return database_->prepare(fresh_key(), setup, seed_statements(schema, orders));
  }
  std::unique_ptr<WorkerDb> open_worker() override { return open_worker_on(*database_, isolation_, busy_timeout_); }
  env::RawConnection& checker() override { return database_->checker(); }
  std::string description() const override {
    return fmt::format("{} {}", server_name(engine_), engine::isolation_name(isolation_));
  }

 private:
  Engine engine_;
  Cluster& cluster_;
  engine::Isolation isolation_;
  Micros busy_timeout_;
  std::unique_ptr<Database> database_;
  bool discarded_ = false;
};

template <class Database, class Cluster>
Status open_on_server(const engine::EngineChoice& choice, Cluster* cluster, Micros busy_timeout,
                      std::unique_ptr<StressDatabase>& out) {
  if (!cluster)
    return Status::error(fmt::format("a {} stress run needs its cluster (EngineChoice::{})", server_name(choice.engine),
                                     engine_name(choice.engine)));
  auto db = std::make_unique<ServerStressDatabase<Cluster, Database>>(choice.engine, *cluster, choice.isolation,
                                                                     busy_timeout);
  if (Status s = db->open(); !s.ok()) return s;
  out = std::move(db);
  return Status::OK();
}

}  // namespace

Status add_stress_orders(env::RawConnection& conn, const Schema& schema, const std::vector<StressOrder>& orders,
                         std::set<std::string>& users) {
  if (orders.empty()) return Status::OK();
  if (Status s = conn.exec_script("BEGIN"); !s.ok()) return s;
  auto failed = [&conn](Status s) {
    (void)conn.exec_script("ROLLBACK");
    return s;
  };
  for (const auto& o : orders) {
    if (Result r = conn.query(schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}); !r.ok())
      return failed(Status::error(fmt::format("seeding order {}: {}", o.order_no, r.status.message())));
    if (users.insert(o.user).second)
      if (Result r = conn.query(schema.insert_account_sql, {o.user}); !r.ok())
        return failed(Status::error(fmt::format("seeding account {}: {}", o.user, r.status.message())));
  }
  return conn.exec_script("COMMIT");
}

Status open_stress_database(const engine::EngineChoice& engine, Micros busy_timeout, const std::string& temp_parent,
                            std::unique_ptr<StressDatabase>& out) {
  out.reset();
  switch (engine.engine) {
    case Engine::kSqlite: {
      auto db = std::make_unique<SqliteStressDatabase>(busy_timeout);
      if (Status s = db->open(temp_parent); !s.ok()) return s;
      out = std::move(db);
      return Status::OK();
    }
    case Engine::kPostgres:
      return open_on_server<engine::PgDatabase>(engine, engine.postgres, busy_timeout, out);
    case Engine::kMariadb:
      return open_on_server<engine::MariadbDatabase>(engine, engine.mariadb, busy_timeout, out);
  }
  return Status::error("unknown engine");
}

}  // namespace twice::stress
