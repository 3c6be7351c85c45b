#include "sim/scheduler.h"

#include "sim/fiber.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

namespace twice::sim {
namespace {

// Runs `tasks` tasks of `points` scheduling points each; returns the order in
// which (task, point) pairs executed.
std::vector<std::pair<int, int>> interleaving(const StrategySpec& strategy, std::uint64_t seed, int tasks, int points) {
  Choices choices(seed);
  Trace trace;
  Scheduler s(strategy, choices, trace, SchedulerLimits{});
  std::vector<std::pair<int, int>> order;
  for (int t = 0; t < tasks; ++t) {
    s.spawn("t", 0, [&s, &order, points] {
      for (int p = 0; p < points; ++p) {
        (void)s.point();
        order.emplace_back(s.current(), p);
      }
    });
  }
  s.run();
  return order;
}

TEST(Scheduler, RunsEveryPointOfEveryTaskExactlyOnceAndInProgramOrder) {
  const auto order = interleaving({}, 5, 3, 4);
  ASSERT_EQ(order.size(), 12u);
  std::map<int, int> next;
  for (auto [task, point] : order) EXPECT_EQ(point, next[task]++) << "task " << task;
}

TEST(Scheduler, SameSeedSameInterleavingAndSeedsDiffer) {
  EXPECT_EQ(interleaving({}, 11, 3, 5), interleaving({}, 11, 3, 5));
  bool differs = false;
  for (std::uint64_t seed = 12; seed < 20 && !differs; ++seed) differs = interleaving({}, seed, 3, 5) != interleaving({}, 11, 3, 5);
  EXPECT_TRUE(differs) << "the random strategy should explore different interleavings";
}

TEST(Scheduler, PctIsDeterministicToo) {
  StrategySpec pct{StrategyKind::kPct, 3, 50, {}, {}};
  EXPECT_EQ(interleaving(pct, 3, 3, 5), interleaving(pct, 3, 3, 5));
}

TEST(Scheduler, AllZeroChoicesRunEachTaskToItsEnd) {
  Choices zeros(std::vector<std::uint64_t>{});
  Trace trace;
  Scheduler s({}, zeros, trace, SchedulerLimits{});
  std::vector<int> order;
  for (int t = 0; t < 2; ++t)
    s.spawn("t", 0, [&] {
      for (int p = 0; p < 3; ++p) {
        (void)s.point();
        order.push_back(s.current());
      }
    });
  s.run();
  EXPECT_EQ(order, (std::vector<int>{1, 1, 1, 2, 2, 2}));
}

TEST(Scheduler, TimersFireInTimeOrderAndTheClockJumpsToThem) {
  Choices choices(1);
  Trace trace;
  Scheduler s({}, choices, trace, SchedulerLimits{});
  std::vector<std::pair<std::string, Micros>> fired;
  s.at(3 * kHour, [&] { fired.emplace_back("c", s.now()); });
  s.at(15 * kSecond, [&] { fired.emplace_back("a", s.now()); });
  s.at(15 * kSecond, [&] { fired.emplace_back("b", s.now()); });
  s.run();
  ASSERT_EQ(fired.size(), 3u);
  EXPECT_EQ(fired[0], std::make_pair(std::string("a"), 15 * kSecond));
  EXPECT_EQ(fired[1], std::make_pair(std::string("b"), 15 * kSecond));
  EXPECT_EQ(fired[2], std::make_pair(std::string("c"), 3 * kHour));
}

TEST(Scheduler, EachStepCostsALatencyFromTheRange) {
  Choices choices(4);
  Trace trace;
  SchedulerLimits limits;
  limits.latency_min = limits.latency_max = 7 * kMillisecond;
  Scheduler s({}, choices, trace, limits);
  s.spawn("t", 0, [&] {
    (void)s.point();
    (void)s.point();
  });
  s.run();
  EXPECT_EQ(s.now(), 3 * 7 * kMillisecond);  // start + two points
}

TEST(Scheduler, SleepingTaskLetsTheClockMoveOn) {
  Choices choices(4);
  Trace trace;
  SchedulerLimits limits;
  limits.latency_min = limits.latency_max = 0;
  Scheduler s({}, choices, trace, limits);
  Micros woke = -1;
  s.spawn("sleeper", 0, [&] {
    s.sleep_for(30 * kSecond);
    woke = s.now();
  });
  s.run();
  EXPECT_EQ(woke, 30 * kSecond);
}

// A task that never returns, `loop` (given the scheduler) being its body's
// one statement: past a budget of 50 steps it is killed and reported stuck,
// and its body never ends normally.
void expect_killed_and_stuck(const std::function<void(Scheduler&)>& loop) {
  Choices choices(4);
  Trace trace;
  SchedulerLimits limits;
  limits.task_step_budget = 50;
  Scheduler s({}, choices, trace, limits);
  bool finished_normally = false;
  bool killed_flag = false;
  s.spawn("looper", 0,
          [&] {
            loop(s);
            finished_normally = true;
          },
          [&](bool killed) { killed_flag = killed; });
  s.run();
  EXPECT_FALSE(finished_normally);
  EXPECT_TRUE(killed_flag);
  ASSERT_EQ(s.stuck().size(), 1u);
  EXPECT_NE(s.stuck()[0].find("budget 50"), std::string::npos) << s.stuck()[0];
}

TEST(Scheduler, TaskOverItsStepBudgetIsKilledAndReportedStuck) {
  expect_killed_and_stuck([](Scheduler& s) {
    for (;;) (void)s.point();  // a handler that never returns
  });
}

// A handler that waits for a flag by sleeping in a loop: past its budget it is
// killed, and its sleeps are dead calls like any other, so TaskKilled ends it.
// A killed task's sleep returned at once without counting: the run never ended.
TEST(Scheduler, ATaskThatSleepsInALoopPastItsBudgetIsKilledAndReportedStuck) {
  expect_killed_and_stuck([](Scheduler& s) {
    for (;;) s.sleep_for(kSecond);  // waits for a flag nobody sets
  });
}

TEST(Scheduler, WhenEveryTaskWaitsOnTheDatabaseOneIsChosenAsVictim) {
  Choices choices(4);
  Trace trace;
  Scheduler s({}, choices, trace, SchedulerLimits{});
  int victims = 0;
  bool released = false;
  for (int t = 0; t < 2; ++t)
    s.spawn("waiter", 0, [&] {
      (void)s.point();
      if (released) return;
      if (s.block_on_db()) {
        ++victims;
        released = true;
        s.wake_db_waiters();
      }
    });
  s.run();
  EXPECT_EQ(victims, 1);
}

// A one-holder lock for the LockWait tests: grantable while nobody holds it.
// Like the ledger, it tells the scheduler when it changes hands.
struct FakeLock {
  int holder = 0;
  void set(int task) {
    holder = task;
    note_lock_change();
  }
  struct Wait final : LockWait {
    const FakeLock* lock;
    explicit Wait(const FakeLock* l) : lock(l) {}
    bool grantable() const override { return lock->holder == 0; }
  };
};

// Tasks that each take the lock, hold it over a few scheduling points and let
// go. A task refused the lock parks with a LockWait: it is not picked while
// the lock is held, however often others step, and the step that resumes it
// takes the lock. So the steps are each task's own steps plus one resumption
// per wait, whatever the seed; and every waiter for a freed lock is enabled,
// so the order in which they get it is the strategy's choice.
TEST(Scheduler, ALockWaiterRunsOnlyWhenItsLockCanBeGranted) {
  constexpr int kTasks = 5, kHeld = 4;
  std::set<std::vector<int>> orders;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Choices choices(seed);
    Trace trace;
    Scheduler s({}, choices, trace, SchedulerLimits{});
    FakeLock lock;
    int waits = 0, futile = 0;
    std::vector<int> order;
    for (int t = 0; t < kTasks; ++t)
      s.spawn("locker", 0, [&] {
        (void)s.point();  // the statement that takes the lock
        while (lock.holder != 0) {
          ++waits;
          FakeLock::Wait wait(&lock);
          ASSERT_FALSE(s.block_on_db(wait));
          if (lock.holder != 0) ++futile;  // resumed although the lock is held
        }
        lock.set(s.current());
        order.push_back(s.current());
        for (int p = 0; p < kHeld; ++p) (void)s.point();
        lock.set(0);  // lets go within its last step: no wake call
      });
    s.run();
    EXPECT_EQ(futile, 0) << "seed " << seed;
    // Each task: its start, the statement that takes the lock, the points it holds it over.
    EXPECT_EQ(s.steps(), kTasks * (2 + kHeld) + waits) << "seed " << seed;
    EXPECT_GT(waits, 0) << "seed " << seed << ": no task ever waited, the test tests nothing";
    EXPECT_LE(waits, kTasks - 1) << "seed " << seed << ": a task waited twice";
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 5u) << "who gets the freed lock is the strategy's choice";
}

// Waits that say their answer is decided by the same thing (LockWaitKey) are
// asked once for all of them per lock change: tasks parked on two locks, each
// lock's waits with one key, are asked at most once per key per change of
// hands, however many wait; and each still runs only when its own lock is
// free. Asked one by one, the waits would be asked about once per waiter per
// change (the bound below fails).
TEST(Scheduler, WaitsWithOneKeyAreAskedOnceForAllPerLockChange) {
  struct KeyedWait final : LockWait {
    const FakeLock* lock;
    int* asks;
    KeyedWait(const FakeLock* l, int* a) : lock(l), asks(a) {}
    bool grantable() const override {
      ++*asks;
      return lock->holder == 0;
    }
    LockWaitKey key() const override { return {lock, 0, 1}; }
  };
  constexpr int kTasks = 12, kHeld = 3;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Choices choices(seed);
    Trace trace;
    Scheduler s({}, choices, trace, SchedulerLimits{});
    FakeLock locks[2];
    int asks = 0, sets = 0, waits = 0, futile = 0;
    for (int t = 0; t < kTasks; ++t)
      s.spawn("locker", 0, [&, t] {
        FakeLock& lock = locks[t % 2];
        (void)s.point();
        while (lock.holder != 0) {
          ++waits;
          KeyedWait wait(&lock, &asks);
          ASSERT_FALSE(s.block_on_db(wait));
          if (lock.holder != 0) ++futile;
        }
        lock.set(s.current());
        ++sets;
        for (int p = 0; p < kHeld; ++p) (void)s.point();
        lock.set(0);
        ++sets;
      });
    s.run();
    EXPECT_EQ(futile, 0) << "seed " << seed;
    EXPECT_GT(waits, kTasks / 2) << "seed " << seed << ": too few waits to tell";
    EXPECT_LE(asks, 2 * (sets + 1)) << "seed " << seed << ": " << waits << " waits";
  }
}

// Tasks share one thread, yet each keeps its own exception state, as a thread
// of its own would: a handler that yields inside a catch block (a ROLLBACK in
// a handler's catch) rethrows its own exception, and a destructor that yields
// during unwinding does not make another task see an exception in flight.
TEST(Scheduler, EachTaskKeepsItsOwnExceptionState) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Choices choices(seed);
    Trace trace;
    Scheduler s({}, choices, trace, SchedulerLimits{});
    std::vector<std::string> rethrown;
    std::vector<int> in_flight_elsewhere;
    for (const char* what : {"first", "second"}) {
      s.spawn("catcher", 0, [&s, &rethrown, what] {
        try {
          throw std::runtime_error(what);
        } catch (...) {
          (void)s.point();
          (void)s.point();
          try {
            throw;
          } catch (const std::runtime_error& e) {
            rethrown.emplace_back(e.what());
          }
        }
      });
    }
    struct YieldsWhileUnwinding {
      Scheduler& s;
      ~YieldsWhileUnwinding() { (void)s.point(); }
    };
    s.spawn("unwinder", 0, [&s] {
      try {
        YieldsWhileUnwinding guard{s};
        throw 1;
      } catch (int) {
      }
    });
    s.spawn("bystander", 0, [&s, &in_flight_elsewhere] {
      for (int p = 0; p < 4; ++p) {
        (void)s.point();
        in_flight_elsewhere.push_back(std::uncaught_exceptions());
      }
    });
    s.run();
    std::sort(rethrown.begin(), rethrown.end());
    EXPECT_EQ(rethrown, (std::vector<std::string>{"first", "second"})) << "seed " << seed;
    EXPECT_EQ(in_flight_elsewhere, std::vector<int>(4, 0)) << "seed " << seed;
  }
}

TEST(Scheduler, ScriptedStrategyFollowsTheScript) {
  StrategySpec script{StrategyKind::kScripted, 2, 200, {1, 2, 2, 1, 1, 2}, {}};
  const auto order = interleaving(script, 0, 2, 2);
  // starts are scheduling points too: T1 starts, T2 starts, T2 p0, T1 p0, T1 p1, T2 p1
  const std::vector<std::pair<int, int>> expected = {{2, 0}, {1, 0}, {1, 1}, {2, 1}};
  EXPECT_EQ(order, expected);
}


// A burst of deliveries keeps a hundred tasks alive at once, most parked on
// the write lock. Their fibers' stacks are kept for the next run's tasks:
// when only 16 were kept, every task past the sixteenth mapped, faulted in
// and unmapped a stack of its own, most of a burst schedule's cost.
TEST(Scheduler, ARunWithManyTasksAliveMapsNoNewStacksTheSecondTime) {
  auto burst = [](std::uint64_t seed) {  // 100 tasks of 3 points, interleaved by `seed`
    Choices choices(seed);
    Trace trace;
    Scheduler s({}, choices, trace, SchedulerLimits{});
    int finished = 0;
    for (int i = 0; i < 100; ++i)
      s.spawn("task", 0, [&s, &finished] {
        for (int p = 0; p < 3; ++p) (void)s.point();
        ++finished;
      });
    s.run();
    return finished;
  };
  ASSERT_EQ(burst(1), 100);
  const std::size_t mapped = Fiber::stacks_mapped();
  ASSERT_EQ(burst(1), 100);  // the same run: as many fibers alive at its peak
  EXPECT_EQ(Fiber::stacks_mapped(), mapped) << "the second run's tasks found the first run's stacks";
}

}  // namespace
}  // namespace twice::sim
