// Scheduler: runs the tasks of one run one at a time, on a virtual clock.
//
// Each task (a delivery to the handler, a background job) runs as a fiber (a
// stack of its own), but only while it holds the baton: the scheduler hands the
// baton to one task, which runs until its next scheduling point (an Env call)
// and hands it back. So exactly one task runs at any moment, and the run is a
// function of the Choices alone. Timers (the gateway's retries and timeouts)
// run on the scheduler's own stack between steps.
//
// Virtual time: every step costs a latency drawn from [latency_min,
// latency_max]; when no task can run, the clock jumps to the next timer or
// sleeper. A day of retries takes microseconds.
//
// Threads: everything happens on the thread that calls run(): construct,
// spawn and run() there. The task-side calls (point, block_on_db, sleep_for,
// ...) are made only by the task holding the baton. The fibers are an
// implementation detail behind this class.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/choices.h"
#include "sim/footprint.h"
#include "sim/id_set.h"
#include "sim/lock_wait.h"
#include "sim/process_faults.h"
#include "sim/strategy.h"
#include "sim/trace.h"
#include "twice/time.h"

namespace twice::sim {

// How a task is taken down (crash, step budget): from then on every Env call
// of the task does nothing and reports failure without yielding, so the
// handler runs to its end with no effect; RAII releases in destructors stay
// safe. A handler that keeps calling its Env regardless (a retry loop) gets
// this exception thrown at it after kDeadCallsBeforeThrow calls, outside any
// unwinding; the task body catches it.
struct TaskKilled {};
inline constexpr int kDeadCallsBeforeThrow = 1000;

struct SchedulerLimits {
  Micros latency_min = 1 * kMillisecond;
  Micros latency_max = 20 * kMillisecond;
  int task_step_budget = 2000;    // a task past this many scheduling points is stuck
  int run_step_budget = 200'000;  // the whole run, all tasks together
};

class Scheduler final : private TaskView {
 public:
  Scheduler(const StrategySpec& strategy, Choices& choices, Trace& trace, SchedulerLimits limits);
  ~Scheduler();
  // Unwinds every started task still parked (a run that threw): each is
  // killed at its scheduling point and its frames' destructors run. The
  // destructor does it too; an owner whose other members those frames use
  // calls it first, while they exist.
  void unwind_parked_tasks();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // --- scheduler side -------------------------------------------------------
  // Who draws pauses and crashes at scheduling points (none by default: no
  // process faults). Must outlive run().
  void set_process_faults(ProcessFaults* faults) { faults_ = faults; }
  // A task that becomes runnable at virtual time `at`; `on_finish` runs on the
  // scheduler's side when the body returns (or is killed). Returns the task id.
  // Both are kept until the scheduler goes, so on_finish may point at what
  // the body owns.
  int spawn(std::string name, Micros at, std::function<void()> body,
            std::function<void(bool killed)> on_finish = {});
  // `fn` runs on the scheduler's side once the clock reaches `at`.
  void at(Micros at, std::function<void()> fn);
  // Runs until no task can run and no timer is pending.
  void run();

  Micros now() const { return now_; }
  int steps() const { return steps_; }
  // Steps at which more than one task could run: the real choices (PCT's k).
  int choice_points() const { return choice_points_; }
  // A hash of the order in which tasks ran (one entry per step): two runs
  // with equal hashes ran the same interleaving, whatever their latencies.
  std::uint64_t interleaving() const { return interleaving_; }
  // Tasks killed for exceeding the step budget, with why.
  const std::vector<std::string>& stuck() const { return stuck_; }
  // Called when a task's database locks may have been released (a
  // transaction ended, a connection closed): tasks waiting on SQLITE_BUSY
  // without a LockWait retry (those with one run when it is grantable).
  void wake_db_waiters();
  // The same for one task: a server engine knows whose statement finished.
  void wake_db_waiter(int task);
  Trace& trace() { return trace_; }
  Choices& choices() { return choices_; }

  // --- task side (only from the task holding the baton) ---------------------
  int current() const { return current_; }
  // A scheduling point before `what` (the statement or call about to run):
  // another task may run before this returns. Returns false when this task is
  // being taken down: the caller must then do nothing and report failure.
  [[nodiscard]] bool point(std::string what = {});
  // SQLITE_BUSY: wait until another task releases database locks. Returns true
  // when the scheduler chose this task as the deadlock victim instead: every
  // task was waiting, and this one must give up with SQLITE_BUSY.
  bool block_on_db();
  // The same, for a wait whose end the scheduler can ask (sim/lock_wait.h):
  // the task is among those that can run exactly while `until` is grantable,
  // and is not woken by wake_db_waiters(). Waiting is then no scheduling point
  // of its own: the step that resumes the task is its retry. `until` must
  // stay valid until this returns.
  bool block_on_db(const LockWait& until);
  void sleep_for(Micros duration);
  // True once this task is being unwound: Env calls then do nothing.
  bool killed() const;
  void record(TraceKind kind, std::string text, std::string result = {});
  // The current task wrote `text` with Env::note: a named script may stop there.
  void note(std::string text);
  // False when the run's trace is not being recorded: callers then skip
  // building the text they would pass to record() and point().
  bool tracing() const { return trace_.recording(); }

 private:
  enum class State { kWaiting, kReady, kBlockedDb, kSleeping, kDone };
  // A parked wait's grantable() answer, and lock_changes + 1 when it was
  // asked (0: not yet).
  struct WaitAnswer {
    std::uint64_t asked = 0;
    bool grant = false;
  };
  // The waits of one LockWaitKey: one answer for all of them, and the tasks
  // parked with it now.
  struct WaitGroup {
    LockWaitKey key;
    WaitAnswer answer;
    IdSet members;
  };
  // Which of the sets below holds a task, as its fields say (file()).
  enum class Filed : std::uint8_t { kNone, kReady, kWaitGroup, kOwnWait, kPlainWait, kSleeping };
  struct Task;

  void fire_due_timers();
  // Sets `task`'s state and files it where the state (and its wait) says.
  void set_state(Task& task, State state);
  // Takes `task` out of the set it is in and files it again by its fields
  // (state, lock_wait, wait_group, wake_at): after any change of them.
  void file(Task& task);
  // The sleepers whose time has come wait for their lock again or are ready.
  void wake_sleepers();
  // Whether group `g`'s waits could be granted now; asks one of its members'
  // LockWait only when a lock changed since it last did.
  bool grantable(WaitGroup& g);
  // Calls f(id) for every task parked on a database lock, in id order.
  template <typename F>
  void each_blocked(F&& f);
  void resume(Task& task);
  void kill(Task& task, const std::string& why, bool stuck);
  void crash();  // every task of the process dies
  // What the step `t` just ran touched, for the exhaustive search's guide.
  Footprint step_footprint(Task& t, bool first_step, const std::string& operation);
  // Task ids are 1, 2, 3, ... in spawn order: task `id` is tasks_[id - 1].
  Task& task(int id) { return *tasks_.at(static_cast<std::size_t>(id - 1)); }
  Task* find_task(int id) const;  // nullptr when no task has that id (0: none runs)
  // TaskView, for the strategy.
  const std::string& pending(int task) const override;
  const std::vector<std::string>& notes(int task) const override;

  std::unique_ptr<Strategy> strategy_;
  Choices& choices_;
  Trace& trace_;
  SchedulerLimits limits_;
  ProcessFaults* faults_ = nullptr;
  bool keep_notes_;

  struct Timer {
    Micros at;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  // A min-heap by (at, seq) kept with std::push_heap/pop_heap rather than a
  // std::priority_queue, whose top() is const: a due timer's function is
  // moved out before it runs, not copied (its captures, the gateway's
  // event ids, would be copied once more per timer). seq is unique, so the
  // order timers fire in is the same with any heap.
  std::vector<Timer> timers_;
  std::uint64_t timer_seq_ = 0;

  std::vector<std::unique_ptr<Task>> tasks_;  // every task of the run, by id - 1
  // Whether parked task `t`, whose wait has no key, could be granted now;
  // asks its LockWait only when a lock changed since it last did.
  bool grantable(Task& t);
  // Where each step finds the tasks that can run, kept as they change state
  // (sim/id_set.h) rather than found by visiting every live task: the ready
  // ones; those parked on a lock, by the key of their wait (the keys parked
  // tasks waited with in this run, in the order first seen: a handful, one
  // file and a few pairs of levels, so found by a linear search); those
  // parked with a wait without a key; those parked without a wait; and the
  // sleepers, a min-heap by (wake time, filing), whose entries a task that
  // was filed again since leaves behind (skipped when met).
  IdSet ready_;
  std::vector<WaitGroup> wait_groups_;
  IdSet own_waits_;
  IdSet plain_waits_;
  struct Sleeper {
    Micros at;
    std::uint64_t seq;  // the task's sleep_seq when filed
    int id;
    bool operator>(const Sleeper& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::vector<Sleeper> sleepers_;
  std::uint64_t sleep_seq_ = 0;
  std::size_t sleeping_ = 0;  // tasks filed as sleeping
  int next_id_ = 1;
  int current_ = 0;
  int last_ = 0;
  Micros now_ = 0;
  int steps_ = 0;
  int choice_points_ = 0;
  std::uint64_t interleaving_ = 0xcbf29ce484222325ULL;  // FNV-1a over the task ids run
  std::vector<std::string> stuck_;
};

}  // namespace twice::sim
