#include "sim/exhaustive_search.h"

#include <algorithm>

namespace twice::sim {

bool ExhaustiveSearch::start_run() {
  if (exhausted_) return false;
  if (started_ && path_.empty()) return false;
  if (bounds_.budget > 0 && runs_ >= bounds_.budget) return false;
  started_ = true;
  pos_ = 0;
  sleep_.clear();
  redundant_ = false;
  preemptions_ = 0;
  faults_ = 0;
  step_open_ = false;
  step_node_ = -1;
  return true;
}

bool ExhaustiveSearch::asleep(const std::vector<Sleeper>& sleep, int task) const {
  if (!bounds_.reduce) return false;
  return std::any_of(sleep.begin(), sleep.end(), [task](const Sleeper& s) { return s.task == task; });
}

bool ExhaustiveSearch::allowed(const Node& node, std::uint64_t v) const {
  if (v >= node.n) return false;
  switch (node.kind) {
    case ChoiceKind::kSchedule: {
      if (asleep(node.sleep, node.order[v]) || asleep(node.done, node.order[v])) return false;
      const int preemptions = node.preemptions_before + (node.last_enabled && v > 0 ? 1 : 0);
      return bounds_.preemption_bound < 0 || preemptions <= bounds_.preemption_bound;
    }
    case ChoiceKind::kFault:
      return v == 0 || node.faults_before + static_cast<int>(v) <= bounds_.max_faults;
    case ChoiceKind::kOther:
      return true;
  }
  return false;
}

void ExhaustiveSearch::close_step() {
  if (!step_open_) return;
  step_open_ = false;
  if (step_node_ >= 0) path_[static_cast<std::size_t>(step_node_)].chosen = step_footprint_;
  // What stays asleep: the tasks whose next step the step just run cannot affect.
  std::vector<Sleeper> next;
  for (const Sleeper& s : step_base_)
    if (s.task != step_task_ && independent(s.step, step_footprint_)) next.push_back(s);
  sleep_ = std::move(next);
}

std::uint64_t ExhaustiveSearch::choose(std::uint64_t n, ChoiceKind kind, const std::vector<int>* order,
                                       bool last_enabled) {
  if (kind == ChoiceKind::kSchedule) close_step();
  else step_footprint_ = Footprint::all();  // a fault or another draw inside a step: we know no better

  if (kind == ChoiceKind::kSchedule && n <= 1) {  // a forced step: no node, but the sleep set moves on
    if (order->empty()) return 0;
    if (asleep(sleep_, order->front())) redundant_ = true;
    step_open_ = true;
    step_task_ = order->front();
    step_node_ = -1;
    step_base_ = sleep_;
    step_footprint_ = Footprint{};
    return 0;
  }

  if (pos_ < path_.size() && (path_[pos_].kind != kind || path_[pos_].n != n)) {
    diverged_ = true;
    path_.resize(pos_);
  }
  if (pos_ == path_.size()) {
    Node node;
    node.kind = kind;
    node.n = n;
    if (order) node.order = *order;
    node.last_enabled = last_enabled;
    node.preemptions_before = preemptions_;
    node.faults_before = faults_;
    node.frozen = redundant_;
    if (kind == ChoiceKind::kSchedule) node.sleep = sleep_;
    node.allowed = 0;
    for (std::uint64_t v = 0; v < n; ++v) node.allowed += allowed(node, v) ? 1 : 0;
    if (!node.frozen) {
      std::uint64_t v = 0;
      while (v < n && !allowed(node, v)) ++v;
      if (v == n) {
        // Every task this run could go on with sleeps (or would need a
        // preemption past the bound): whatever follows repeats a schedule run before.
        redundant_ = true;
        node.frozen = true;
        v = 0;
      }
      node.value = v;
    }
    path_.push_back(std::move(node));
  }
  Node& node = path_[pos_];
  const long here = static_cast<long>(pos_++);
  if (kind == ChoiceKind::kFault) {
    faults_ += static_cast<int>(node.value);
    return node.value;
  }
  if (kind == ChoiceKind::kOther) return node.value;

  if (node.last_enabled && node.value > 0) ++preemptions_;
  step_open_ = true;
  step_task_ = node.order[node.value];
  step_node_ = here;
  step_base_ = node.sleep;
  if (bounds_.reduce) step_base_.insert(step_base_.end(), node.done.begin(), node.done.end());
  step_footprint_ = Footprint{};
  return node.value;
}

void ExhaustiveSearch::stepped(const Footprint& footprint) {
  if (!step_open_) return;
  Footprint f = footprint;
  add_trigger_writes(bounds_.triggers, f);
  step_footprint_.merge(f);
}

void ExhaustiveSearch::outside_step() {
  if (step_open_) step_footprint_ = Footprint::all();
}

void ExhaustiveSearch::end_run() {
  close_step();
  ++runs_;
  if (!redundant_) ++schedules_;
  // A run that ended before the end of the path (it cannot: a run is a
  // function of its choices) would leave stale nodes; drop them.
  path_.resize(std::min(path_.size(), pos_));
  while (!path_.empty()) {
    Node& node = path_.back();
    if (!node.frozen) {
      std::uint64_t v = node.value + 1;
      while (v < node.n && !allowed(node, v)) ++v;
      if (v < node.n) {
        if (node.kind == ChoiceKind::kSchedule) node.done.push_back(Sleeper{node.order[node.value], node.chosen});
        node.value = v;
        ++node.rank;
        return;
      }
    }
    path_.pop_back();
  }
  exhausted_ = true;
}

double ExhaustiveSearch::estimated_schedules() const {
  if (exhausted_ || path_.empty()) return static_cast<double>(schedules_);
  // The share of the tree explored: the subtrees left of the current path,
  // each sibling taken as large as the others at its node.
  double explored = 0.0;
  double weight = 1.0;
  for (const Node& node : path_) {
    if (node.frozen) break;
    const int ways = std::max(1, node.allowed);
    explored += weight * node.rank / ways;
    weight /= ways;
  }
  if (explored <= 0.0) return static_cast<double>(schedules_);
  return static_cast<double>(schedules_) / explored;
}

}  // namespace twice::sim
