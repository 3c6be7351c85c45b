// The acceptance targets of issue 10 on PostgreSQL, with fixed seeds through
// simulate(): designs whose verdict depends on the engine and the isolation
// level, beside their SQLite verdict.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <utility>

#include "engine_environment.h"
#include "gateway/scenario.h"
#include "support.h"

namespace twice::testing {
namespace {

using engine::Isolation;

constexpr int kSeeds = 40;
const std::set<std::string> kNone;

}  // namespace

TEST(CheckInTxn, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeeds, engine::EngineChoice{}), kNone);
}

TEST(CheckInTxn, DoubleCreditsOnPostgresReadCommitted) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeeds, on_postgres(Isolation::kReadCommitted)),
            std::set<std::string>{"double_credit"});
}

TEST(CheckInTxn, PassesOnPostgresSerializable) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeeds, on_postgres(Isolation::kSerializable)), kNone);
}

TEST(CheckInTxn, PassesOnPostgresRepeatableRead) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeeds, on_postgres(Isolation::kRepeatableRead)), kNone);
}

TEST(RmwInTxn, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-topups"), "rmw-in-txn", kSeeds, engine::EngineChoice{}), kNone);
}

TEST(RmwInTxn, LosesAnUpdateOnPostgresReadCommitted) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-topups"), "rmw-in-txn", kSeeds, on_postgres(Isolation::kReadCommitted)),
            std::set<std::string>{"lost_update"});
}

TEST(RmwInTxn, TheRetryMakesRepeatableReadPass) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-topups"), "rmw-in-txn", kSeeds, on_postgres(Isolation::kRepeatableRead)), kNone);
}

TEST(SelectForUpdate, PassesEverywhere) {
  const gateway::Scenario s = bundled_scenario("concurrent-duplicates");
  EXPECT_EQ(violations(s, "select-for-update", kSeeds, engine::EngineChoice{}), kNone);
  for (auto i : {Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable})
    EXPECT_EQ(violations(s, "select-for-update", kSeeds, on_postgres(i)), kNone) << engine::isolation_name(i);
}

TEST(UniqueKeyCas, PassesOnEveryIsolationLevel) {
  const gateway::Scenario s = bundled_scenario("concurrent-duplicates");
  for (auto i : {Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable})
    EXPECT_EQ(violations(s, "unique-key+cas", kSeeds, on_postgres(i)), kNone) << engine::isolation_name(i);
}

// Acceptance: the same replay on PostgreSQL, twice, from the command line
// (each with its own throwaway server): byte-identical output, showing the
// double credit.
TEST(TwiceReplay, OnPostgresTwiceGivesByteIdenticalOutput) {
  const std::string args =
      "replay --handler check-in-txn --scenario concurrent-duplicates --seed 6337990874401953 --shrunk "
      "--engine postgres --isolation read-committed --scenarios-dir " TWICE_SOURCE_DIR "/scenarios";
  const auto [first, first_status] = twice_command(args);
  const auto [second, second_status] = twice_command(args);
  // Exit 1: the replayed run shows a violation.
  EXPECT_EQ(first_status, 1) << first;
  EXPECT_EQ(second_status, 1) << second;
  EXPECT_EQ(first, second);
  EXPECT_NE(first.find("# verdict: double_credit"), std::string::npos) << first;
  EXPECT_NE(first.find("concurrent-duplicates@postgres/read-committed"), std::string::npos) << first;
}

}  // namespace twice::testing
