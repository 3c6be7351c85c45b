// Strategy: which enabled task runs at the next scheduling point.
//
// Strategies draw only from the run's Choices, so they replay and shrink with
// the rest of the run. A draw of zero means "keep running the task that ran
// last", so a shrunk schedule has as few context switches as the bug needs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/choices.h"
#include "sim/enabled.h"

namespace twice::sim {

// One step of a named script: task `task` runs until it has done an
// operation whose text contains `until` ("UPDATE orders", "lock ", "COMMIT"),
// that operation included; or, when `until` is the text of an Env::note the
// task writes, until it has written that note (the operation after the note
// is not run). "T2 `UPDATE orders` before T1 `INSERT INTO ledger`" is
// {{2, "UPDATE orders"}, {1, "INSERT INTO ledger"}}.
struct ScriptStep {
  int task = 0;
  std::string until;
};

enum class StrategyKind {
  kRandom,
  kPct,
  // Every schedule, depth-first (sim/exhaustive_search.h): the Choices decide
  // (sim/choices.h, Choices::Exhaustive); replays like the others.
  kExhaustive,
  kScripted,  // follows `script` (an entry for a task not spawned yet waits for it), then runs each task
              // to its end: for hand-forced regression tests
};

struct StrategySpec {
  StrategyKind kind = StrategyKind::kRandom;
  int pct_depth = 2;         // d: the bug depth PCT targets (d-1 priority change points)
  // k: the scheduling points with a real choice (more than one task can run)
  // in one run; the explorer measures it (explore/explorer.cpp) unless given.
  int pct_max_steps = 200;
  // kScripted: the task to run at each scheduling point, in order ("T1 reads,
  // then T2 reads, then T1 writes"), in the spirit of RocksDB's sync points.
  // An entry naming a task that cannot run is skipped; past the end, the last
  // task that ran keeps running, then the lowest-numbered one.
  std::vector<int> script;
  // kScripted, by name instead of by count (used when not empty): each step
  // runs its task until it has done what `until` names, so a forced
  // interleaving survives a handler gaining a statement. See ScriptStep.
  std::vector<ScriptStep> steps;
  // kExhaustive: the search's bounds, for its name and the replay commands.
  int preemption_bound = 2;  // < 0: none
  int max_faults = 1;
};

std::string strategy_name(const StrategySpec& spec);  // "random", "pct(d=2)", "exhaustive(preemptions<=2, faults<=1)"

// What a strategy may know of the tasks besides their ids: what each will do
// when picked. Implemented by the Scheduler.
class TaskView {
 public:
  virtual ~TaskView() = default;
  // The operation task `task` runs when picked next ("" before its start).
  virtual const std::string& pending(int task) const = 0;
  // The notes (Env::note) task `task` has written, in order.
  virtual const std::vector<std::string>& notes(int task) const = 0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual void on_spawn(int task, Choices& choices) = 0;
  // `enabled` is not empty; `last` may be absent from it.
  virtual int pick(const Enabled& enabled, int last, Choices& choices) = 0;
};

std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, Choices& choices, const TaskView& tasks);

}  // namespace twice::sim
