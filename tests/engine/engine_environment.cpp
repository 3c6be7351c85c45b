#include "engine_environment.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace twice::testing {
namespace {

std::unique_ptr<engine::PgCluster> g_cluster;
std::unique_ptr<engine::MariadbCluster> g_mariadb;

class ServersEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    // TWICE_TEST_PG_URL: run against an existing server (a CI service) instead.
    const char* url = std::getenv("TWICE_TEST_PG_URL");
    g_cluster = std::make_unique<engine::PgCluster>(url ? url : "");
    const Status s = g_cluster->ensure_started();
    ASSERT_TRUE(s.ok()) << s.to_string();
    // TWICE_TEST_MARIADB_URL: the same for MariaDB (mysql://...).
    const char* maria_url = std::getenv("TWICE_TEST_MARIADB_URL");
    g_mariadb = std::make_unique<engine::MariadbCluster>(maria_url ? maria_url : "");
    const Status m = g_mariadb->ensure_started();
    ASSERT_TRUE(m.ok()) << m.to_string();
  }
  void TearDown() override {
    g_cluster.reset();
    g_mariadb.reset();
  }
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

engine::MariadbCluster& mariadb() { return *g_mariadb; }

engine::EngineChoice on_mariadb(engine::Isolation isolation) {
  engine::EngineChoice c;
  c.engine = Engine::kMariadb;
  c.isolation = isolation;
  c.mariadb = g_mariadb.get();
  return c;
}

run::RunResult run_on(const gateway::Scenario& s, const std::string& handler_name, std::uint64_t seed,
                      const engine::EngineChoice& engine) {
  const HandlerInfo* h = HandlerRegistry::instance().find(handler_name);
  if (!h) throw std::runtime_error("handler not registered: " + handler_name);
  run::RunSpec spec{&s, h, {}, seed, std::nullopt};
  spec.engine = engine;
  return run::simulate(spec).value();
}

std::set<std::string> violations(const gateway::Scenario& s, const std::string& handler_name, int n,
                                 const engine::EngineChoice& engine) {
  std::set<std::string> out;
  for (int seed = 1; seed <= n; ++seed)
    for (const auto& v : run_on(s, handler_name, static_cast<std::uint64_t>(seed), engine).verdict.violations)
      out.insert(v.invariant);
  return out;
}

std::string trace_text(const run::RunResult& r) { return sim::format_trace(r.trace); }

CommandOutput twice_command(const std::string& args) {
  CommandOutput out;
  FILE* p = ::popen((std::string(TWICE_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, p)) > 0) out.output.append(buffer, n);
  const int status = ::pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace twice::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new twice::testing::ServersEnvironment());
  return RUN_ALL_TESTS();
}
