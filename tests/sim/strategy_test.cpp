// Strategies on their own, fed enabled sets by hand: PCT's priorities and
// change points, the named script's steps.
#include "sim/strategy.h"

#include <gtest/gtest.h>

#include "no_tasks.h"

namespace twice::sim {
namespace {

// PCT with one change point at real step 1, T1 above T2. A point where only
// one task can run is no step of PCT's: the change falls on the second
// point with a choice, however many single-task points come between.
TEST(Pct, CountsOnlyPointsWithARealChoice) {
  for (int single_points : {0, 1, 5}) {
    StrategySpec spec;
    spec.kind = StrategyKind::kPct;
    spec.pct_depth = 2;
    spec.pct_max_steps = 10;
    // Replayed draws: the change point (1), then T1's and T2's priorities.
    Choices choices(std::vector<std::uint64_t>{1, 900'000, 100});
    NoTasks view;
    auto pct = make_strategy(spec, choices, view);
    pct->on_spawn(1, choices);
    pct->on_spawn(2, choices);
    int last = 0;
    for (int i = 0; i < single_points; ++i) last = pct->pick({1}, last, choices);
    EXPECT_EQ(last = pct->pick({1, 2}, last, choices), 1) << "real step 0: the higher priority runs";
    for (int i = 0; i < single_points; ++i) last = pct->pick({1}, last, choices);
    EXPECT_EQ(last = pct->pick({1, 2}, last, choices), 2) << "real step 1: T1 dropped below T2, "
                                                          << single_points << " single points between";
    EXPECT_EQ(pct->pick({1, 2}, last, choices), 2);
  }
}

class ScriptedTasks final : public TaskView {
 public:
  const std::string& pending(int task) const override { return pending_.at(task); }
  const std::vector<std::string>& notes(int task) const override { return notes_.at(task); }
  std::map<int, std::string> pending_{{1, ""}, {2, ""}};
  std::map<int, std::vector<std::string>> notes_{{1, {}}, {2, {}}};
};

TEST(NamedScript, RunsEachTaskUpToTheOperationItNamesThenTheNext) {
  StrategySpec spec;
  spec.kind = StrategyKind::kScripted;
  spec.steps = {{1, "UPDATE"}, {2, "SELECT"}};
  Choices choices(std::uint64_t{0});
  ScriptedTasks tasks;
  auto s = make_strategy(spec, choices, tasks);
  s->on_spawn(1, choices);
  s->on_spawn(2, choices);
  tasks.pending_[1] = "SELECT status";
  EXPECT_EQ(s->pick({1, 2}, 0, choices), 1);
  tasks.pending_[1] = "UPDATE orders";
  EXPECT_EQ(s->pick({1, 2}, 1, choices), 1) << "T1 runs its UPDATE: the step ends with it";
  tasks.pending_[1] = "INSERT INTO ledger";
  tasks.pending_[2] = "SELECT status";
  EXPECT_EQ(s->pick({1, 2}, 1, choices), 2) << "the next step: T2 up to its SELECT";
  EXPECT_EQ(s->pick({1, 2}, 2, choices), 2) << "past the end, the task that ran last goes on";
}

TEST(NamedScript, ANoteEndsAStepWithoutRunningTheNextOperation) {
  StrategySpec spec;
  spec.kind = StrategyKind::kScripted;
  spec.steps = {{1, "decided"}, {2, "SELECT"}};
  Choices choices(std::uint64_t{0});
  ScriptedTasks tasks;
  auto s = make_strategy(spec, choices, tasks);
  s->on_spawn(1, choices);
  s->on_spawn(2, choices);
  tasks.pending_[1] = "SELECT status";
  EXPECT_EQ(s->pick({1, 2}, 0, choices), 1);
  tasks.notes_[1].push_back("decided");
  tasks.pending_[1] = "UPDATE orders";
  tasks.pending_[2] = "SELECT status";
  EXPECT_EQ(s->pick({1, 2}, 1, choices), 2) << "T1 wrote its note: T2's step begins before T1's UPDATE";
}

TEST(NamedScript, WaitsForATaskNotSpawnedYet) {
  StrategySpec spec;
  spec.kind = StrategyKind::kScripted;
  spec.steps = {{3, "SELECT"}};
  Choices choices(std::uint64_t{0});
  ScriptedTasks tasks;
  tasks.pending_[3] = "SELECT status";
  tasks.notes_[3] = {};
  auto s = make_strategy(spec, choices, tasks);
  s->on_spawn(1, choices);
  EXPECT_EQ(s->pick({1}, 0, choices), 1);
  s->on_spawn(3, choices);
  EXPECT_EQ(s->pick({1, 3}, 1, choices), 3);
}

}  // namespace
}  // namespace twice::sim
