// The acceptance targets of issue 10 on PostgreSQL, with fixed seeds through
// simulate(): designs whose verdict depends on the engine and the isolation
// level, beside their SQLite verdict.
#include <gtest/gtest.h>

#include <set>

#include "engine_environment.h"
#include "gateway/scenario.h"
#include "support.h"

namespace twice::testing {
namespace {

using engine::Isolation;

gateway::Scenario bundled(const std::string& name) {
  gateway::Scenario s;
  gateway::ScenarioError err;
  if (!gateway::load_scenario(std::string(TWICE_SOURCE_DIR) + "/scenarios/" + name + ".toml", s, err))
    throw std::runtime_error(err.message);
  return s;
}

// The invariants violated in any of seeds 1..n.
std::set<std::string> violations(const gateway::Scenario& s, const std::string& handler_name, int n,
                                 std::optional<Isolation> isolation) {
  std::set<std::string> out;
  for (int seed = 1; seed <= n; ++seed) {
    run::RunSpec spec{&s, &handler(handler_name), {}, static_cast<std::uint64_t>(seed), std::nullopt};
    if (isolation) spec.engine = on_postgres(*isolation);
    for (const auto& v : run::simulate(spec).verdict.violations) out.insert(v.invariant);
  }
  return out;
}

constexpr int kSeeds = 40;
const std::set<std::string> kNone;

}  // namespace

TEST(CheckInTxn, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled("concurrent-duplicates"), "check-in-txn", kSeeds, std::nullopt), kNone);
}

TEST(CheckInTxn, DoubleCreditsOnPostgresReadCommitted) {
  EXPECT_EQ(violations(bundled("concurrent-duplicates"), "check-in-txn", kSeeds, Isolation::kReadCommitted),
            std::set<std::string>{"double_credit"});
}

TEST(CheckInTxn, PassesOnPostgresSerializable) {
  EXPECT_EQ(violations(bundled("concurrent-duplicates"), "check-in-txn", kSeeds, Isolation::kSerializable), kNone);
}

TEST(CheckInTxn, PassesOnPostgresRepeatableRead) {
  EXPECT_EQ(violations(bundled("concurrent-duplicates"), "check-in-txn", kSeeds, Isolation::kRepeatableRead), kNone);
}

TEST(RmwInTxn, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled("concurrent-topups"), "rmw-in-txn", kSeeds, std::nullopt), kNone);
}

TEST(RmwInTxn, LosesAnUpdateOnPostgresReadCommitted) {
  EXPECT_EQ(violations(bundled("concurrent-topups"), "rmw-in-txn", kSeeds, Isolation::kReadCommitted),
            std::set<std::string>{"lost_update"});
}

TEST(RmwInTxn, TheRetryMakesRepeatableReadPass) {
  EXPECT_EQ(violations(bundled("concurrent-topups"), "rmw-in-txn", kSeeds, Isolation::kRepeatableRead), kNone);
}

TEST(SelectForUpdate, PassesEverywhere) {
  const gateway::Scenario s = bundled("concurrent-duplicates");
  EXPECT_EQ(violations(s, "select-for-update", kSeeds, std::nullopt), kNone);
  for (auto i : {Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable})
    EXPECT_EQ(violations(s, "select-for-update", kSeeds, i), kNone) << engine::isolation_name(i);
}

TEST(UniqueKeyCas, PassesOnEveryIsolationLevel) {
  const gateway::Scenario s = bundled("concurrent-duplicates");
  for (auto i : {Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable})
    EXPECT_EQ(violations(s, "unique-key+cas", kSeeds, i), kNone) << engine::isolation_name(i);
}

}  // namespace twice::testing
