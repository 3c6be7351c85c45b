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

constexpr int kSeedsPerCell = 40;
const std::set<std::string> kNone;

}  // namespace

TEST(CheckInTxn, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeedsPerCell, engine::EngineChoice{}), kNone);
}

TEST(CheckInTxn, PassesOnPostgresRepeatableRead) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "check-in-txn", kSeedsPerCell, on_postgres(Isolation::kRepeatableRead)), kNone);
}

TEST(RmwInTxn, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-topups"), "rmw-in-txn", kSeedsPerCell, engine::EngineChoice{}), kNone);
}

TEST(RmwInTxn, TheRetryMakesRepeatableReadPass) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-topups"), "rmw-in-txn", kSeedsPerCell, on_postgres(Isolation::kRepeatableRead)), kNone);
}

// On the server engines, on every level: ServerRun.UniqueKeyCasAndSelectForUpdatePassOnEveryLevel.
TEST(SelectForUpdate, PassesOnSqlite) {
  EXPECT_EQ(violations(bundled_scenario("concurrent-duplicates"), "select-for-update", kSeedsPerCell, engine::EngineChoice{}),
            kNone);
}

}  // namespace twice::testing
