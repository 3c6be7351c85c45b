// ExhaustiveSearch: depth-first over the choice tree of a run, every schedule
// once, with sleep sets pruning the orders that only swap independent steps.
//
// Each node of the tree is one draw the run made under the exhaustive
// strategy (sim/choices.h): which enabled task runs next, whether a fault
// fires, a deadlock's victim. A run follows the current path's prefix, then
// takes the first value allowed at every new node (the task that ran last, no
// fault). After the run, the deepest node with a value left is advanced and
// the run starts again from scratch (a run is a function of its choices).
//
// Bounds: at most `preemption_bound` preemptions per schedule (a preemption:
// another task runs while the one that ran last could go on), at most
// `max_faults` faults fired. Reduction: sleep sets (Godefroid 1996). A task
// whose step from a node was explored sleeps in the later siblings' subtrees
// until a step dependent on it runs (sim/footprint.h); a run in which every
// enabled task sleeps only repeats an order already run, and is "redundant":
// it is run to its end (a run cannot stop half way) but neither counted nor
// checked. Why sleep sets and not DPOR: docs/architecture.md.
//
// Use: while (search.start_run()) { run with the search as the run's guide;
// search.end_run(); if (!search.redundant()) check the run }.
// One thread; the search outlives its runs.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/choice_guide.h"
#include "sim/footprint.h"

namespace twice::sim {

struct SearchBounds {
  int preemption_bound = 2;  // < 0: no bound
  int max_faults = 1;
  long budget = 0;           // runs (redundant ones included); 0: no budget
  bool reduce = true;        // sleep sets; false: every order of every step
  TriggerWrites triggers;    // a write to a key table writes these too (sim/footprint.h)
};

class ExhaustiveSearch final : public ChoiceGuide {
 public:
  explicit ExhaustiveSearch(SearchBounds bounds) : bounds_(bounds) {}

  // True when there is a run to make: the tree is not exhausted and the
  // budget not spent. Resets the per-run state.
  bool start_run();
  // The run made with this guide has ended: count it, pick the next branch.
  void end_run();

  // --- the run just ended ---------------------------------------------------
  // Every enabled task slept at some point: an order already run, repeated.
  bool redundant() const { return redundant_; }
  int preemptions() const { return preemptions_; }
  int faults() const { return faults_; }

  // --- the search -------------------------------------------------------------
  long runs() const { return runs_; }            // every run made
  long schedules() const { return schedules_; }  // runs not redundant: the distinct schedules
  // Every branch within the bounds was run (false when the budget ran out first).
  bool complete() const { return exhausted_; }
  // A replayed prefix drew differently than when it was first run: the run
  // is not a function of its choices (state kept across runs). The search
  // goes on from the new draws; its counts are then not to be trusted.
  bool diverged() const { return diverged_; }
  // The schedules of the whole tree, estimated from the part explored: each
  // node's unexplored siblings are taken to hold as many schedules as the
  // explored ones (the assumption of Knuth's estimator). Exact once complete.
  double estimated_schedules() const;

  // ChoiceGuide
  std::uint64_t choose(std::uint64_t n, ChoiceKind kind, const std::vector<int>* order, bool last_enabled) override;
  void stepped(const Footprint& footprint) override;
  void outside_step() override;

 private:
  struct Sleeper {
    int task = 0;
    Footprint step;  // what the task's next step touches
  };
  struct Node {
    ChoiceKind kind = ChoiceKind::kSchedule;
    std::uint64_t n = 0;
    std::uint64_t value = 0;
    std::vector<int> order;  // kSchedule: the task of each value
    bool last_enabled = false;
    int preemptions_before = 0;
    int faults_before = 0;
    bool frozen = false;          // made after the run was found redundant: no branches
    std::vector<Sleeper> sleep;   // asleep when the node was reached
    std::vector<Sleeper> done;    // siblings explored before the current value
    Footprint chosen;             // the step the current value ran
    int allowed = 1;              // values the bounds and the sleep set allow
    int rank = 0;                 // allowed values before the current one
  };

  bool allowed(const Node& node, std::uint64_t v) const;
  bool asleep(const std::vector<Sleeper>& sleep, int task) const;
  void close_step();

  SearchBounds bounds_;
  std::vector<Node> path_;
  bool started_ = false;
  bool exhausted_ = false;
  bool diverged_ = false;
  long runs_ = 0;
  long schedules_ = 0;

  // The run under way.
  std::size_t pos_ = 0;             // the next node of path_
  std::vector<Sleeper> sleep_;      // the sleep set of the current state
  bool redundant_ = false;
  int preemptions_ = 0;
  int faults_ = 0;
  bool step_open_ = false;          // a task was chosen and its step not yet closed
  int step_task_ = 0;
  long step_node_ = -1;             // its node in path_ (-1: a forced step)
  std::vector<Sleeper> step_base_;  // the sleep set its step filters
  Footprint step_footprint_;
};

}  // namespace twice::sim
