// The explorer's worker threads (explore_matrix with --jobs), here so that the
// ThreadSanitizer build of this suite (scripts/test.sh) runs them: cells on
// three threads, each with its own fibers, sharing the handler registry, the
// seeded-database cache and the result vector.
#include <gtest/gtest.h>

#include "explore/explorer.h"
#include "gateway/scenario.h"
#include "twice/handler.h"

namespace twice::explore {
namespace {

gateway::Scenario bundled(const std::string& name) {
  StatusOr<gateway::Scenario> s = gateway::load_scenario(std::string(TWICE_SOURCE_DIR) + "/scenarios/" + name + ".toml");
  if (!s.ok()) throw std::runtime_error(s.status().message());
  return std::move(s).value();
}

TEST(ExplorerThreads, ThreeWorkersGiveTheSameMatrixAsOne) {
  const std::vector<gateway::Scenario> scenarios = {bundled("concurrent-duplicates"), bundled("concurrent-topups")};
  std::vector<const HandlerInfo*> handlers;
  for (const char* name : {"check-then-act", "cas", "read-modify-write"})
    handlers.push_back(HandlerRegistry::instance().find(name));
  ExploreOptions o;
  o.seeds = 12;
  o.shrink_budget = 60;
  o.jobs = 1;
  int reported = 0;
  o.on_cell = [&](const CellResult&, int, int) { ++reported; };  // serialised by the explorer
  const MatrixResult one = explore_matrix(handlers, scenarios, o, ExpectedMatrix{});
  o.jobs = 3;
  const MatrixResult three = explore_matrix(handlers, scenarios, o, ExpectedMatrix{});
  EXPECT_EQ(reported, 12);
  ASSERT_EQ(three.cells.size(), one.cells.size());
  for (std::size_t i = 0; i < one.cells.size(); ++i) {
    EXPECT_EQ(three.cells[i].handler, one.cells[i].handler);
    EXPECT_EQ(three.cells[i].observed(), one.cells[i].observed());
    EXPECT_EQ(three.cells[i].failing_run_indices, one.cells[i].failing_run_indices);
  }
}

}  // namespace
}  // namespace twice::explore
