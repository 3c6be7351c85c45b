// ChoiceGuide: who decides the draws of a run under the exhaustive strategy.
//
// A run is a function of its choices, so an exhaustive search never copies a
// state: it runs the program again from the start for each new branch of the
// choice tree, replaying the prefix that leads there (stateless model
// checking, as CHESS and Loom do). The guide is asked for every draw of the
// run (sim/choices.h routes them here) and told what each step touched
// (sim/footprint.h), which is what partial-order reduction needs. The search
// itself is sim/exhaustive_search.h.
//
// Called only from the thread running the run.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/footprint.h"

namespace twice::sim {

enum class ChoiceKind : std::uint8_t {
  kSchedule,  // which enabled task runs next
  kFault,     // whether a fault fires here (2 ways: 0 it does not, 1 it does)
  kOther,     // anything else drawn (a deadlock's victim, a gateway's target)
};

class ChoiceGuide {
 public:
  virtual ~ChoiceGuide() = default;
  // The value of the next draw, in [0, n). For kSchedule, `order` is the
  // enabled tasks by value and `last_enabled` says that order[0] ran last
  // (another value preempts it); n may be 1 there (a forced step).
  virtual std::uint64_t choose(std::uint64_t n, ChoiceKind kind, const std::vector<int>* order, bool last_enabled) = 0;
  // The task chosen last ran one step that touched `footprint`.
  virtual void stepped(const Footprint& footprint) = 0;
  // Something besides the tasks' steps changed the state (a timer fired):
  // the step under way is taken as dependent on everything.
  virtual void outside_step() = 0;
};

}  // namespace twice::sim
