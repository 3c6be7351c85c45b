// Cell isolation (explore/cell_process.h) from the inside: the wire format
// carries a CellResult back unchanged, and a matrix explored in child
// processes equals the same matrix explored in threads. The hostile handlers
// are in tests/hostile, run through the `twice` command.
#include "explore/cell_process.h"

#include <cstdlib>

#include <gtest/gtest.h>

#include "../support.h"
#include "sim/choices.h"

namespace twice::explore {
namespace {

TEST(CellProcess, TheWireFormatCarriesEveryFieldAndRawBytes) {
  CellResult c;
  c.handler = "h";
  c.scenario = "s";
  c.strategy = "pct(d=2)";
  c.seeds_run = 7;
  c.failing_runs = 2;
  c.failing_run_indices = {3, 7};
  c.max_tasks = 4;
  c.max_steps = 99;
  ViolationResult v;
  v.invariant = "double_credit";
  v.subject = "O-1";
  static constexpr char kRaw[] = "not UTF-8: \xff\xfe and a NUL \0 inside";
  v.detail = std::string(kRaw, sizeof kRaw - 1);
  v.failures = 2;
  v.schedules_to_first = 3;
  v.seed = 0xffffffffffffffffull;
  v.counterexample.seed = 12;
  v.counterexample.choices = {1, 2, 18446744073709551615ull};
  v.counterexample.rows.push_back(TranscriptRow{1, "0.040s", "sql", "SELECT 1", "1 row", true, 0});
  v.counterexample.columns = {"T1: notify", "T2: notify"};
  v.counterexample.gateway = {"sends"};
  v.counterexample.balances = {"alice: 200"};
  v.counterexample.replay_command = "twice replay a";
  v.counterexample.replay_shrunk_command = "twice replay b";
  c.violations.push_back(v);
  c.expected = {"double_credit"};
  c.expected_reason = "why";
  c.expectation_listed = true;
  c.matched = true;
  c.failures.push_back(CellFailure{"crashed: SIGSEGV", "detail", "exploring", 3, 5, "twice replay c"});

  CellResult back;
  ASSERT_TRUE(decode_cell(encode_cell(c), back));
  EXPECT_EQ(encode_cell(back), encode_cell(c));
  EXPECT_EQ(back.violations.at(0).detail, v.detail);
  EXPECT_EQ(back.violations.at(0).seed, v.seed);
  EXPECT_EQ(back.failing_run_indices, c.failing_run_indices);
  EXPECT_EQ(back.failures.at(0).verdict, "crashed: SIGSEGV");
  EXPECT_EQ(back.violations.at(0).counterexample.rows.at(0).text, "SELECT 1");

  CellResult garbage;
  EXPECT_FALSE(decode_cell("not cbor", garbage));
}

TEST(CellProcess, AMatrixInChildProcessesEqualsTheSameMatrixInThreads) {
  const std::vector<gateway::Scenario> scenarios = {testing::concurrent_copies_scenario(1),
                                                    testing::two_topups_scenario()};
  const std::vector<const HandlerInfo*> handlers = {&testing::handler("check-then-act"),
                                                    &testing::handler("read-modify-write"), &testing::handler("cas")};
  ExploreOptions o;
  o.seeds = 30;
  o.shrink_budget = 200;
  o.jobs = 2;
  const MatrixResult threads = explore_matrix(handlers, scenarios, o, ExpectedMatrix{});
  const MatrixResult children = explore_matrix_isolated(handlers, scenarios, o, IsolationLimits{}, ExpectedMatrix{});
  ASSERT_EQ(children.cells.size(), threads.cells.size());
  EXPECT_FALSE(children.interrupted);
  for (std::size_t i = 0; i < threads.cells.size(); ++i) {
    EXPECT_TRUE(children.cells[i].failures.empty()) << children.cells[i].failures.front().detail;
    // Everything but the wall-clock time each took, which came back through the pipe too.
    CellResult child = children.cells[i], thread = threads.cells[i];
    EXPECT_GT(child.seconds, 0.0);
    EXPECT_GT(thread.seconds, 0.0);
    child.seconds = thread.seconds = 0;
    EXPECT_EQ(encode_cell(child), encode_cell(thread)) << threads.cells[i].handler;
  }
  // Not vacuous: check-then-act's counterexample came back through the pipe.
  bool any_counterexample = false;
  for (const auto& c : children.cells) any_counterexample |= !c.violations.empty();
  EXPECT_TRUE(any_counterexample);
}

// A handler like `false-success` whose process aborts when it makes its
// `n`th handler: the `n`th run of that process (a run makes one handler).
HandlerInfo aborting_at_run(int n) {
  HandlerInfo h = testing::handler("false-success");
  h.name = "aborts-at-run-" + std::to_string(n);
  h.make = [n, make = h.make] {
    static int made = 0;  // in the cell's child: it starts at 0 there
    if (++made == n) std::abort();
    return make();
  };
  return h;
}

// The run under way when a child dies is read from memory the child shares
// with its parent: it must name the run and seed that were running.
TEST(CellProcess, ADeadChildNamesTheRunItWasExploring) {
  const std::vector<gateway::Scenario> scenarios = {testing::concurrent_copies_scenario(1)};
  const HandlerInfo h = aborting_at_run(7);
  ExploreOptions o;
  o.seeds = 20;
  o.base_seed = 5;
  const MatrixResult m = explore_matrix_isolated({&h}, scenarios, o, IsolationLimits{}, ExpectedMatrix{});
  ASSERT_EQ(m.cells.size(), 1u);
  ASSERT_EQ(m.cells[0].failures.size(), 1u);
  const CellFailure& f = m.cells[0].failures[0];
  EXPECT_EQ(f.verdict, "crashed: SIGABRT");
  EXPECT_EQ(f.phase, "exploring");
  EXPECT_EQ(f.run, 7);
  EXPECT_EQ(f.seed, sim::derive_seed(5, 6));
  EXPECT_NE(f.detail.find("while exploring run 7 (seed " + std::to_string(f.seed) + ")"), std::string::npos) << f.detail;
}

TEST(CellProcess, ADeadChildNamesTheRunItWasShrinking) {
  const std::vector<gateway::Scenario> scenarios = {testing::concurrent_copies_scenario(1)};
  ExploreOptions o;
  o.seeds = 5;
  o.shrink_budget = 50;
  // Where the cell's first shrink starts from, explored in this process.
  const CellResult whole = explore_cell(scenarios[0], testing::handler("false-success"), o, Expectation{});
  ASSERT_FALSE(whole.violations.empty()) << "false-success must fail within 5 seeds";
  const ViolationResult& first = whole.violations.front();
  // Five runs explore, the sixth re-runs the failing seed, the seventh is the first candidate.
  const HandlerInfo h = aborting_at_run(7);
  const MatrixResult m = explore_matrix_isolated({&h}, scenarios, o, IsolationLimits{}, ExpectedMatrix{});
  ASSERT_EQ(m.cells.size(), 1u);
  ASSERT_EQ(m.cells[0].failures.size(), 1u);
  const CellFailure& f = m.cells[0].failures[0];
  EXPECT_EQ(f.verdict, "crashed: SIGABRT");
  EXPECT_EQ(f.phase, "shrinking " + first.invariant);
  EXPECT_EQ(f.run, first.schedules_to_first);
  EXPECT_EQ(f.seed, first.seed);
  EXPECT_NE(f.replay_command.find("--shrunk"), std::string::npos) << f.replay_command;
}

}  // namespace
}  // namespace twice::explore
