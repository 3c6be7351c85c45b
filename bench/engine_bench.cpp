// (e) Engines: what a run costs on a real server beside SQLite. One
// PostgreSQL server for the whole benchmark binary, started (and timed) on
// first use outside any timed loop.
//   BM_EngineSchedulesPerSecond/<engine>: one simulate() of unique-key+cas on
//     concurrent-duplicates per iteration, seed i of `twice run`'s base seed 1,
//     no trace: schedules per second on one core, as (b) for SQLite. The
//     PostgreSQL ones also with the DELETE reset (_delete), which runs no
//     longer use (not exact), to show what the exact one costs.
//   BM_PgReset/<method>: bringing a PostgreSQL database back to the seeded
//     state of that scenario: TRUNCATE ... RESTART IDENTITY + the seed rows
//     (what runs use), or DELETE + setval() + the seed rows.
//   BM_PgServerStart: initdb + start + stop of a throwaway server.
//   BM_MariadbReset: bringing a MariaDB database back to the seeded state
//     (TRUNCATE of every table + the seed rows, what runs use).
//   BM_MariadbServerStart: mariadb-install-db + start + stop.
// One MariaDB server too, started the same way.
// Real (wall-clock) time: the server's processes do most of the work.
#include <memory>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "engine/mariadb_cluster.h"
#include "engine/mariadb_server.h"
#include "engine/pg_cluster.h"
#include "engine/postgres_server.h"
#include "run/simulate.h"
#include "sim/choices.h"
#include "twice/schema.h"

namespace twice::bench {
namespace {

engine::PgCluster* cluster(benchmark::State& state) {
  static std::unique_ptr<engine::PgCluster> instance;
  static Status started;
  if (!instance) {
    instance = std::make_unique<engine::PgCluster>();
    started = instance->ensure_started();
  }
  if (!started.ok()) {
    state.SkipWithError(started.message().c_str());
    return nullptr;
  }
  return instance.get();
}

engine::MariadbCluster* mariadb(benchmark::State& state) {
  static std::unique_ptr<engine::MariadbCluster> instance;
  static Status started;
  if (!instance) {
    instance = std::make_unique<engine::MariadbCluster>();
    started = instance->ensure_started();
  }
  if (!started.ok()) {
    state.SkipWithError(started.message().c_str());
    return nullptr;
  }
  return instance.get();
}

void BM_EngineSchedulesPerSecond(benchmark::State& state, Engine engine, engine::Isolation isolation,
                                 engine::ResetMethod pg_reset = engine::ResetMethod::kTruncate) {
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("handler not registered");
  run::RunSpec spec{&scenario, handler, sim::StrategySpec{}, 0, std::nullopt, false};
  if (engine == Engine::kPostgres) {
    spec.engine.engine = engine;
    spec.engine.isolation = isolation;
    spec.engine.postgres = cluster(state);
    if (!spec.engine.postgres) return;
    if (pg_reset != engine::ResetMethod::kTruncate) {
      // A cluster of its own on the same server, whose two databases (a run
      // takes them in turns: engine/database_pool.h) reset the other way.
      static std::unique_ptr<engine::PgCluster> other;
      if (!other) other = std::make_unique<engine::PgCluster>(spec.engine.postgres->server()->conninfo("postgres"));
      if (Status s = other->ensure_started(); !s.ok()) return state.SkipWithError(s.message().c_str());
      spec.engine.postgres = other.get();
      std::unique_ptr<engine::PgDatabase> db, spare;
      if (Status s = other->lease(db); !s.ok()) return state.SkipWithError(s.message().c_str());
      if (Status s = other->lease(spare); !s.ok()) return state.SkipWithError(s.message().c_str());
      db->set_reset_method(pg_reset);
      spare->set_reset_method(pg_reset);
      other->give_back(std::move(db));
      other->give_back(std::move(spare));
    }
    spec.seed = sim::derive_seed(1, 0);
    (void)run::simulate(spec).value();  // the database and its schema exist before the timed loop
  }
  if (engine == Engine::kMariadb) {
    spec.engine.engine = engine;
    spec.engine.isolation = isolation;
    spec.engine.mariadb = mariadb(state);
    if (!spec.engine.mariadb) return;
    spec.seed = sim::derive_seed(1, 0);
    (void)run::simulate(spec).value();
  }
  std::uint64_t i = 0;
  long failing = 0;
  for (auto _ : state) {
    spec.seed = sim::derive_seed(1, i++);
    if (!run::simulate(spec).value().verdict.violations.empty()) ++failing;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["failing_share"] = static_cast<double>(failing) / static_cast<double>(state.iterations());
}
BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, sqlite, Engine::kSqlite, engine::Isolation::kReadCommitted)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, postgres_read_committed, Engine::kPostgres,
                  engine::Isolation::kReadCommitted)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, postgres_serializable, Engine::kPostgres,
                  engine::Isolation::kSerializable)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, postgres_read_committed_delete, Engine::kPostgres,
                  engine::Isolation::kReadCommitted, engine::ResetMethod::kDelete)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, postgres_serializable_delete, Engine::kPostgres,
                  engine::Isolation::kSerializable, engine::ResetMethod::kDelete)
    ->UseRealTime();

BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, mariadb_repeatable_read, Engine::kMariadb,
                  engine::Isolation::kRepeatableRead)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_EngineSchedulesPerSecond, mariadb_serializable, Engine::kMariadb, engine::Isolation::kSerializable)
    ->UseRealTime();

void BM_PgReset(benchmark::State& state, engine::ResetMethod method) {
  engine::PgCluster* c = cluster(state);
  if (!c) return;
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const Schema& schema = reference_schema();
  std::vector<engine::PgDatabase::Statement> seed;
  for (const auto& o : scenario.orders) {
    seed.push_back({schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}});
    seed.push_back({schema.insert_account_sql, {o.user}});
  }
  std::unique_ptr<engine::PgDatabase> db;
  if (Status s = c->lease(db); !s.ok()) return state.SkipWithError(s.message().c_str());
  db->set_reset_method(method);
  const std::string key = "bench reset";
  if (Status s = db->prepare(key, schema.postgres_setup_sql, seed); !s.ok())
    return state.SkipWithError(s.message().c_str());
  for (auto _ : state) {
    // What a run leaves behind: a credit's rows.
    (void)db->checker().exec_script(
        "UPDATE orders SET status = 'PAID'; INSERT INTO ledger(order_no, user_id, amount) VALUES ('x', 'y', 1); "
        "INSERT INTO callback_log(out_trade_no) VALUES ('x')");
    if (Status s = db->prepare(key, schema.postgres_setup_sql, seed); !s.ok())
      return state.SkipWithError(s.message().c_str());
  }
  db->set_reset_method(engine::ResetMethod::kTruncate);
  c->give_back(std::move(db));
}
BENCHMARK_CAPTURE(BM_PgReset, truncate_restart_identity, engine::ResetMethod::kTruncate)->UseRealTime();
BENCHMARK_CAPTURE(BM_PgReset, delete_setval, engine::ResetMethod::kDelete)->UseRealTime();

void BM_MariadbReset(benchmark::State& state) {
  engine::MariadbCluster* c = mariadb(state);
  if (!c) return;
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const Schema& schema = reference_schema();
  std::vector<engine::MariadbDatabase::Statement> seed;
  for (const auto& o : scenario.orders) {
    seed.push_back({schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}});
    seed.push_back({schema.insert_account_sql, {o.user}});
  }
  std::unique_ptr<engine::MariadbDatabase> db;
  if (Status s = c->lease(db); !s.ok()) return state.SkipWithError(s.message().c_str());
  const std::string key = "bench reset";
  if (Status s = db->prepare(key, schema.mariadb_setup_sql, seed); !s.ok())
    return state.SkipWithError(s.message().c_str());
  for (auto _ : state) {
    (void)db->checker().exec_script(
        "UPDATE orders SET status = 'PAID'; INSERT INTO ledger(order_no, user_id, amount) VALUES ('x', 'y', 1); "
        "INSERT INTO callback_log(out_trade_no) VALUES ('x')");
    if (Status s = db->prepare(key, schema.mariadb_setup_sql, seed); !s.ok())
      return state.SkipWithError(s.message().c_str());
  }
  c->give_back(std::move(db));
}
BENCHMARK(BM_MariadbReset)->UseRealTime();

void BM_MariadbServerStart(benchmark::State& state) {
  double install = 0, start = 0;
  for (auto _ : state) {
    std::unique_ptr<engine::MariadbServer> server;
    if (Status s = engine::MariadbServer::start(server); !s.ok()) return state.SkipWithError(s.message().c_str());
    install += server->install_seconds();
    start += server->start_seconds();
  }
  state.counters["install_s"] = install / static_cast<double>(state.iterations());
  state.counters["start_s"] = start / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MariadbServerStart)->UseRealTime()->Iterations(3)->Unit(benchmark::kMillisecond);

void BM_PgServerStart(benchmark::State& state) {
  double initdb = 0, start = 0;
  for (auto _ : state) {
    std::unique_ptr<engine::PostgresServer> server;
    if (Status s = engine::PostgresServer::start(server); !s.ok()) return state.SkipWithError(s.message().c_str());
    initdb += server->initdb_seconds();
    start += server->start_seconds();
  }
  state.counters["initdb_s"] = initdb / static_cast<double>(state.iterations());
  state.counters["start_s"] = start / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PgServerStart)->UseRealTime()->Iterations(3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace twice::bench
