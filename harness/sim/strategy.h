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

namespace twice::sim {

enum class StrategyKind {
  kRandom,
  kPct,
  kScripted,  // follows `script` (an entry for a task not spawned yet waits for it), then runs each task
              // to its end: for hand-forced regression tests
};

struct StrategySpec {
  StrategyKind kind = StrategyKind::kRandom;
  int pct_depth = 2;         // d: the bug depth PCT targets (d-1 priority change points)
  int pct_max_steps = 200;   // k: an estimate of the scheduling points in one run
  // kScripted: the task to run at each scheduling point, in order ("T1 reads,
  // then T2 reads, then T1 writes"), in the spirit of RocksDB's sync points.
  // An entry naming a task that cannot run is skipped; past the end, the last
  // task that ran keeps running, then the lowest-numbered one.
  std::vector<int> script;
};

std::string strategy_name(const StrategySpec& spec);  // "random", "pct(d=2)"

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual void on_spawn(int task, Choices& choices) = 0;
  // `enabled` is sorted by task id and not empty; `last` may be absent from it.
  virtual int pick(const std::vector<int>& enabled, int last, Choices& choices) = 0;
};

std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, Choices& choices);

}  // namespace twice::sim
