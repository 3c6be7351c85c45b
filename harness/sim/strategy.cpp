#include "sim/strategy.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace twice::sim {

std::string strategy_name(const StrategySpec& spec) {
  if (spec.kind == StrategyKind::kRandom) return "random";
  if (spec.kind == StrategyKind::kScripted) return "scripted";
  if (spec.kind == StrategyKind::kExhaustive)
    return spec.preemption_bound < 0 ? fmt::format("exhaustive(faults<={})", spec.max_faults)
                                     : fmt::format("exhaustive(preemptions<={}, faults<={})", spec.preemption_bound,
                                                   spec.max_faults);
  return fmt::format("pct(d={})", spec.pct_depth);
}

namespace {

// Uniform over the enabled tasks, with index 0 meaning "the last one again".
class RandomStrategy final : public Strategy {
 public:
  void on_spawn(int, Choices&) override {}
  // The order drawn from: the task that ran last (when enabled), then the
  // others in id order. Indexed in place, by rank: building that order was
  // an allocation at every step, and walking it grew a step's cost with the
  // tasks enabled (issue #12).
  int pick(const Enabled& enabled, int last, Choices& choices) override {
    const bool last_enabled = enabled.contains(last);
    const std::uint64_t others = enabled.size() - (last_enabled ? 1 : 0);
    std::uint64_t i = choices.draw(others + (last_enabled ? 1 : 0));
    if (!last_enabled) return enabled.nth(i);
    if (i == 0) return last;
    --i;  // the i-th of the others: past `last`'s place, one further
    return enabled.nth(i < enabled.rank(last) ? i : i + 1);
  }
};

// The exhaustive search's strategy: the order is RandomStrategy's (0: the
// task that ran last), and the Choices' guide decides (sim/choice_guide.h).
class ExhaustiveStrategy final : public Strategy {
 public:
  void on_spawn(int, Choices&) override {}
  int pick(const Enabled& enabled, int last, Choices& choices) override {
    std::vector<int> order;
    order.reserve(enabled.size());
    const bool last_enabled = enabled.contains(last);
    if (last_enabled) order.push_back(last);
    enabled.each([&](int t) {
      if (t != last) order.push_back(t);
    });
    return order[choices.schedule(order, last_enabled)];
  }
};

// Probabilistic Concurrency Testing (Burckhardt et al., ASPLOS 2010). Each task
// gets a random priority at spawn; the highest-priority enabled task runs; at
// d-1 random steps the running task drops below every initial priority. A bug
// of depth d among n tasks and k steps is hit with probability >= 1/(n k^(d-1)).
class PctStrategy final : public Strategy {
 public:
  PctStrategy(const StrategySpec& spec, Choices& choices) : depth_(std::max(1, spec.pct_depth)) {
    for (int i = 1; i < depth_; ++i)
      change_points_.push_back(static_cast<int>(choices.draw(std::max(1, spec.pct_max_steps))));
  }
  void on_spawn(int task, Choices& choices) override {
    // Initial priorities live above depth_, so lowered ones (depth_-1 ... 1) sort below them.
    priority_[task] = depth_ + static_cast<long>(choices.draw(1'000'000));
  }
  int pick(const Enabled& enabled, int last, Choices&) override {
    // Only real choices count as PCT's steps: a point where one task alone
    // can run is no place to change a priority.
    if (enabled.size() == 1) return enabled.front();
    for (std::size_t j = 0; j < change_points_.size(); ++j)
      if (change_points_[j] == step_ && priority_.count(last)) priority_[last] = depth_ - 1 - static_cast<long>(j);
    ++step_;
    int best = enabled.front();
    enabled.each([&](int t) {
      if (priority_[t] > priority_[best]) best = t;
    });
    return best;
  }

 private:
  int depth_;
  int step_ = 0;
  std::vector<int> change_points_;
  std::map<int, long> priority_;
};

// An entry naming a task that cannot run is skipped; one naming a task not
// spawned yet waits for it, so a script can force the interleaving of T3 and
// T4 (a refund's copies, say) without counting the steps of T1 and T2 before.
class ScriptedStrategy final : public Strategy {
 public:
  explicit ScriptedStrategy(std::vector<int> script) : script_(std::move(script)) {}
  void on_spawn(int task, Choices&) override { spawned_ = std::max(spawned_, task); }
  int pick(const Enabled& enabled, int last, Choices&) override {
    while (next_ < script_.size() && script_[next_] <= spawned_) {
      const int want = script_[next_++];
      if (enabled.contains(want)) return want;
    }
    if (enabled.contains(last)) return last;
    return enabled.front();
  }

 private:
  std::vector<int> script_;
  std::size_t next_ = 0;
  int spawned_ = 0;
};

// Named steps: the step's task runs until its pending operation names the
// step's `until` (then it runs that operation, and the next step begins), or
// until it has written a note of that text (the next step begins at once).
// While the step's task cannot run (not arrived, waiting on a lock), the
// task that ran last goes on, else the lowest-numbered one; past the last
// step, likewise.
class NamedScriptStrategy final : public Strategy {
 public:
  NamedScriptStrategy(std::vector<ScriptStep> steps, const TaskView& tasks) : steps_(std::move(steps)), tasks_(tasks) {}
  void on_spawn(int task, Choices&) override { spawned_ = std::max(spawned_, task); }
  int pick(const Enabled& enabled, int last, Choices&) override {
    while (next_ < steps_.size()) {
      const ScriptStep& step = steps_[next_];
      if (step.task > spawned_) break;  // not spawned yet: wait for it
      if (wrote_note(step)) {
        ++next_;
        continue;
      }
      if (!enabled.contains(step.task)) break;
      if (tasks_.pending(step.task).find(step.until) != std::string::npos) ++next_;
      return step.task;
    }
    if (enabled.contains(last)) return last;
    return enabled.front();
  }

 private:
  // The step's note was written since the last step of the same task ended.
  bool wrote_note(const ScriptStep& step) {
    const auto& notes = tasks_.notes(step.task);
    std::size_t& seen = notes_seen_[step.task];
    for (std::size_t i = seen; i < notes.size(); ++i) {
      if (notes[i] == step.until) {
        seen = i + 1;
        return true;
      }
    }
    return false;
  }

  std::vector<ScriptStep> steps_;
  const TaskView& tasks_;
  std::size_t next_ = 0;
  int spawned_ = 0;
  std::map<int, std::size_t> notes_seen_;
};

}  // namespace

std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, Choices& choices, const TaskView& tasks) {
  if (spec.kind == StrategyKind::kPct) return std::make_unique<PctStrategy>(spec, choices);
  if (spec.kind == StrategyKind::kScripted && !spec.steps.empty())
    return std::make_unique<NamedScriptStrategy>(spec.steps, tasks);
  if (spec.kind == StrategyKind::kScripted) return std::make_unique<ScriptedStrategy>(spec.script);
  if (spec.kind == StrategyKind::kExhaustive) return std::make_unique<ExhaustiveStrategy>();
  return std::make_unique<RandomStrategy>();
}

}  // namespace twice::sim
