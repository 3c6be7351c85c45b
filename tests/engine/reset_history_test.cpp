// A run on a server engine is a function of its inputs alone, not of the runs
// its database served before (issue 10): the same seeds of one cell give the
// same traces, byte for byte, on a database that has just been made and on
// one that has been reset hundreds of times for another cell. On each server
// engine at SERIALIZABLE, where the physical layout and the planner's choice
// decide which predicate locks (PostgreSQL) or next-key locks (InnoDB) a
// statement takes.
//
// The bug this guards: PostgreSQL's reset was DELETE, with a VACUUM every
// 500th reset, counted over every cell of the process. The VACUUM set the
// tables' statistics, the planner then chose a Seq Scan for `UPDATE accounts
// ... WHERE user_id = ?`, whose relation-level SIREAD lock made every
// concurrent credit of another user fail with 40001: unique-key-no-txn x
// flash-sale lost payments after other cells and none alone. Each side runs
// on a cluster of its own (databases of its own on the shared server), so no
// other test's runs are part of either history.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "engine/mariadb_cluster.h"
#include "engine/pg_cluster.h"
#include "engine_environment.h"
#include "gateway/scenario.h"
#include "support.h"
#include "twice/schema.h"

namespace twice::testing {
namespace {

using engine::Isolation;

constexpr int kResetSeeds = 6;

// Another key's seeded state: the reference schema with concurrent-duplicates' orders.
std::vector<engine::PgDatabase::Statement> other_seed() {
  const gateway::Scenario s = bundled_scenario("concurrent-duplicates");
  const Schema& schema = reference_schema();
  std::vector<engine::PgDatabase::Statement> seed;
  for (const auto& o : s.orders) {
    seed.push_back({schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}});
    seed.push_back({schema.insert_account_sql, {o.user}});
  }
  return seed;
}

// Leases the two databases a run takes in turns (engine/database_pool.h),
// resets each `n` times to another key's state (what serving that many runs
// of another cell does to it), and gives them back: every later run of the
// cluster gets one of them.
template <class Cluster, class Database>
void serve_resets(Cluster& cluster, int n, const std::string& setup_sql) {
  std::unique_ptr<Database> first, second;
  ASSERT_TRUE(cluster.lease(first).ok());
  ASSERT_TRUE(cluster.lease(second).ok());
  const auto seed = other_seed();
  for (Database* db : {first.get(), second.get()})
    for (int i = 0; i < n; ++i) {
      const Status s = db->prepare("reset history", setup_sql, seed);
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
  cluster.give_back(std::move(first));
  cluster.give_back(std::move(second));
}

// The shared server's address, as --engine-url would name it.
std::string postgres_url() {
  if (const char* url = std::getenv("TWICE_TEST_PG_URL")) return url;
  return postgres().server()->conninfo("postgres");
}
std::string mariadb_url() {
  if (const char* url = std::getenv("TWICE_TEST_MARIADB_URL")) return url;
  return "mysql://root@localhost?socket=" + mariadb().server()->socket();
}

// The traces of seeds 1..kResetSeeds of unique-key-no-txn x flash-sale at
// SERIALIZABLE on `engine`.
std::vector<std::string> cell_traces(const engine::EngineChoice& engine) {
  const gateway::Scenario s = bundled_scenario("flash-sale");
  std::vector<std::string> out;
  for (std::uint64_t seed = 1; seed <= kResetSeeds; ++seed) out.push_back(trace_text(run_on(s, "unique-key-no-txn", seed, engine)));
  return out;
}

void expect_same_traces(const std::vector<std::string>& alone, const std::vector<std::string>& after) {
  ASSERT_EQ(alone.size(), after.size());
  for (std::size_t i = 0; i < alone.size(); ++i)
    EXPECT_EQ(alone[i], after[i]) << "seed " << i + 1 << " differs after the history";
}

TEST(ResetHistory, PostgresSerializableRunIgnoresTheRunsItsDatabaseServedBefore) {
  engine::EngineChoice e = on_postgres(Isolation::kSerializable);
  engine::PgCluster alone(postgres_url());
  e.postgres = &alone;
  const auto fresh = cell_traces(e);

  // 500 resets: the old reset's VACUUM then fell on the cell's second run.
  engine::PgCluster served(postgres_url());
  ASSERT_TRUE(served.ensure_started().ok());
  serve_resets<engine::PgCluster, engine::PgDatabase>(served, 500, reference_schema().postgres_setup_sql);
  e.postgres = &served;
  expect_same_traces(fresh, cell_traces(e));
}

TEST(ResetHistory, MariadbSerializableRunIgnoresTheRunsItsDatabaseServedBefore) {
  engine::EngineChoice e = on_mariadb(Isolation::kSerializable);
  engine::MariadbCluster alone(mariadb_url());
  e.mariadb = &alone;
  const auto fresh = cell_traces(e);

  engine::MariadbCluster served(mariadb_url());
  ASSERT_TRUE(served.ensure_started().ok());
  serve_resets<engine::MariadbCluster, engine::MariadbDatabase>(served, 100, reference_schema().mariadb_setup_sql);
  e.mariadb = &served;
  expect_same_traces(fresh, cell_traces(e));
}

}  // namespace
}  // namespace twice::testing
