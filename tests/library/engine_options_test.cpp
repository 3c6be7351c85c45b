// The test API on a server engine (Options::engine): the check starts its own
// PostgreSQL server, once per test process, and holds the handler to the
// same invariants there. check-in-txn, safe on SQLite, double-credits at
// PostgreSQL's default level, read committed; cas does not.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "../unique_temp_dir.h"
#include "contains.h"
#include "twice/gtest.h"
#include "twice/testing.h"

namespace {

using twice::testing::Options;
using twice::testing::Report;
using twice::testing::contains;

Options concurrent_duplicates_on(std::string engine, std::string isolation) {
  Options o;
  o.bundled = false;
  o.scenarios = {"concurrent-duplicates"};
  o.seeds = 30;  // check-in-txn double-credits in about 60 of 100 schedules there
  o.shrink_budget = 300;
  o.engine = std::move(engine);
  o.isolation = std::move(isolation);
  return o;
}

TEST(TestingApiOnEngines, CheckInTxnPassesOnSqlite) {
  TWICE_EXPECT_EXACTLY_ONCE("check-in-txn", concurrent_duplicates_on("sqlite", ""));
}

TEST(TestingApiOnEngines, CheckInTxnDoubleCreditsOnPostgresReadCommitted) {
  const Report r = twice::testing::check_exactly_once("check-in-txn", concurrent_duplicates_on("postgres", ""));
  ASSERT_FALSE(r.passed) << r.message;
  ASSERT_EQ(r.violations.size(), 1u) << r.message;
  EXPECT_EQ(r.violations.front(), "concurrent-duplicates@postgres/read-committed: double_credit");
  EXPECT_TRUE(contains(r.message, "on postgres/read-committed")) << r.message;
  // Which server the verdict came from: another server, or version, can tell another story.
  EXPECT_TRUE(contains(r.message, "; ran on the postgres server ")) << r.message;
  EXPECT_TRUE(contains(r.message, ", started by twice; ")) << r.message;
  // Asked to contain its runs (the default), the check says it could not.
  EXPECT_TRUE(contains(r.message, "; not contained: a server engine's runs share this process's connections\n"))
      << r.message;
  // The counterexample replays on the same engine and level.
  EXPECT_TRUE(contains(r.message, "--engine postgres --isolation read-committed")) << r.message;
  // The shrunk story: both copies read WAIT_PAY in their transactions, both credit.
  EXPECT_TRUE(contains(r.message, "was credited 2 times")) << r.message;
}

TEST(TestingApiOnEngines, CasPassesOnPostgresReadCommitted) {
  TWICE_EXPECT_EXACTLY_ONCE("cas", concurrent_duplicates_on("postgres", "read-committed"));
}

TEST(TestingApiOnEngines, CheckRunTakesTheEngineToo) {
  const Report r = twice::testing::check_run("check-in-txn", {"concurrent-duplicates", 6337990874401953},
                                             concurrent_duplicates_on("postgres", "serializable"));
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_TRUE(contains(r.message, "check-in-txn: exactly once on concurrent-duplicates@postgres/serializable seed "
                                  "6337990874401953; ran on the postgres server "))
      << r.message;
}

// Options::engine_url's password never reaches Report::message, which a test
// prints to a CI log; the message names the server without it. Server-free:
// a socket folder nobody serves, a URL Connector/C's parser refuses.
TEST(TestingApiOnEngines, AnEngineUrlThatFailsIsNamedWithoutItsPassword) {
  const std::string empty = (twice::testing::unique_temp_dir() / "no-server").string();
  std::filesystem::create_directories(empty);
  Options o = concurrent_duplicates_on("postgres", "");
  o.engine_url = "postgresql://app:TWICE-SECRET-4711@/pay?host=" + empty;
  Report r = twice::testing::check_exactly_once("cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(contains(r.message, "TWICE-SECRET-4711")) << r.message;
  EXPECT_TRUE(r.message.starts_with("Options::engine_url 'postgresql://app@/pay?host=" + empty +
                                    "': cannot connect to PostgreSQL: "))
      << r.message;
  r = twice::testing::check_run("cas", {"concurrent-duplicates", 1}, o);
  EXPECT_FALSE(r.passed);
  EXPECT_FALSE(contains(r.message, "TWICE-SECRET-4711")) << r.message;

  o = concurrent_duplicates_on("mariadb", "");
  o.engine_url = "mysql://app:TWICE/SECRET-4711@db.internal/pay";
  r = twice::testing::check_exactly_once("cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.message, "Options::engine_url 'mysql://app@db.internal/pay': '***' is not a port");
}

TEST(TestingApiOnEngines, AnUnknownEngineOrLevelIsAFailedReportNamingTheField) {
  Report r = twice::testing::check_exactly_once("cas", concurrent_duplicates_on("oracle", ""));
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "Options::engine is \"oracle\"")) << r.message;
  r = twice::testing::check_exactly_once("cas", concurrent_duplicates_on("postgres", "snapshot"));
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "Options::isolation is \"snapshot\"")) << r.message;
  r = twice::testing::check_exactly_once("cas", concurrent_duplicates_on("sqlite", "serializable"));
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "Options::engine is sqlite")) << r.message;
}

}  // namespace
