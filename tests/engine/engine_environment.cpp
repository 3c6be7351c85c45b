#include "engine_environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

namespace twice::testing {
namespace {

std::unique_ptr<engine::PgCluster> g_cluster;

class PostgresEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    // TWICE_TEST_PG_URL: run against an existing server (a CI service) instead.
    const char* url = std::getenv("TWICE_TEST_PG_URL");
    g_cluster = std::make_unique<engine::PgCluster>(url ? url : "");
    const Status s = g_cluster->ensure_started();
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  void TearDown() override { g_cluster.reset(); }
};

}  // namespace

engine::PgCluster& postgres() { return *g_cluster; }

engine::EngineChoice on_postgres(engine::Isolation isolation) {
  engine::EngineChoice c;
  c.engine = Engine::kPostgres;
  c.isolation = isolation;
  c.postgres = g_cluster.get();
  return c;
}

}  // namespace twice::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new twice::testing::PostgresEnvironment());
  return RUN_ALL_TESTS();
}
