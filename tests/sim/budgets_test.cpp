// The scheduler's step budgets at their boundaries: a task, and the whole
// run, at exactly their budget are left alone; one step past it they are
// taken down and reported stuck. A task's first run is a step, and so is each
// scheduling point after it.
#include <gtest/gtest.h>

#include "sim/scheduler.h"

namespace twice::sim {
namespace {

struct Outcome {
  int steps = 0;
  std::vector<std::string> stuck;
  int points_done = 0;  // scheduling points that returned true
};

Outcome run_tasks(int tasks, int points, SchedulerLimits limits) {
  Choices choices(1);
  Trace trace;
  Scheduler s({}, choices, trace, limits);
  Outcome o;
  for (int t = 0; t < tasks; ++t) {
    s.spawn("t", 0, [&s, &o, points] {
      for (int p = 0; p < points; ++p)
        if (s.point()) ++o.points_done;
    });
  }
  s.run();
  o.steps = s.steps();
  o.stuck = s.stuck();
  return o;
}

TEST(Budgets, ATaskAtItsBudgetRunsToItsEnd) {
  SchedulerLimits l;
  l.task_step_budget = 10;
  const auto o = run_tasks(1, 9, l);  // 1 + 9 steps
  EXPECT_EQ(o.steps, 10);
  EXPECT_TRUE(o.stuck.empty());
  EXPECT_EQ(o.points_done, 9);
}

TEST(Budgets, ATaskOneStepPastItsBudgetIsStuck) {
  SchedulerLimits l;
  l.task_step_budget = 10;
  const auto o = run_tasks(1, 10, l);
  ASSERT_EQ(o.stuck.size(), 1u);
  EXPECT_NE(o.stuck[0].find("made 10 scheduling points without returning (budget 10)"), std::string::npos)
      << o.stuck[0];
  EXPECT_LT(o.points_done, 10);
}

TEST(Budgets, ARunAtItsBudgetRunsToItsEnd) {
  SchedulerLimits l;
  l.run_step_budget = 100;
  const auto o = run_tasks(2, 49, l);  // 2 x (1 + 49) steps
  EXPECT_EQ(o.steps, 100);
  EXPECT_TRUE(o.stuck.empty());
  EXPECT_EQ(o.points_done, 98);
}

TEST(Budgets, ARunOneStepPastItsBudgetTakesDownEveryTaskStillRunning) {
  SchedulerLimits l;
  l.run_step_budget = 100;
  const auto o = run_tasks(2, 50, l);  // 102 steps wanted: at step 101 one task at least is still running
  ASSERT_FALSE(o.stuck.empty());
  for (const auto& why : o.stuck)
    EXPECT_NE(why.find("the run exceeded 100 scheduling points"), std::string::npos) << why;
  EXPECT_LT(o.points_done, 100);
}

}  // namespace
}  // namespace twice::sim
