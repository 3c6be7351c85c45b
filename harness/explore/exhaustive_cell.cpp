#include "explore/exhaustive_cell.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "explore/schedule_text.h"
#include "explore/shell_quote.h"
#include "explore/shrink.h"
#include "explore/transcript.h"
#include "sim/exhaustive_search.h"
#include "sim/knuth_estimate.h"

namespace twice::explore {

namespace {

// Knuth's estimate when the budget runs out: this many probes (runs), drawn from this seed.
constexpr int kProbes = 1000;
constexpr std::uint64_t kProbeSeed = 15;

// Replays a schedule as the exhaustive strategy does, counting preemptions.
class PreemptionCounter final : public sim::ChoiceGuide {
 public:
  explicit PreemptionCounter(const std::vector<std::uint64_t>& choices) : choices_(choices) {}
  std::uint64_t choose(std::uint64_t n, sim::ChoiceKind kind, const std::vector<int>*, bool last_enabled) override {
    if (n <= 1) return 0;  // a forced step draws nothing
    const std::uint64_t v = pos_ < choices_.size() ? std::min(choices_[pos_], n - 1) : 0;
    ++pos_;
    if (kind == sim::ChoiceKind::kSchedule && last_enabled && v > 0) ++preemptions_;
    return v;
  }
  void stepped(const sim::Footprint&) override {}
  void outside_step() override {}
  int preemptions() const { return preemptions_; }

 private:
  const std::vector<std::uint64_t>& choices_;
  std::size_t pos_ = 0;
  int preemptions_ = 0;
};

// Reduction needs footprints the rules of sim/footprint.h can read: SQLite,
// and triggers whose writes it can follow (the harness's own keeps the
// status history), no foreign keys.
bool can_reduce(const HandlerInfo& handler, const engine::EngineChoice& engine, sim::TriggerWrites& triggers) {
  if (!engine.is_sqlite()) return false;
  return sim::trigger_writes(handler.make()->schema().setup_sql, triggers);
}

struct Failing {
  ViolationResult result;
  std::vector<std::uint64_t> fewest;  // the failing schedule with the fewest preemptions
  int preemptions = 0;
  int found_at_bound = -1;  // the smallest bound whose search showed it (-1: only the bound-K search did)
};

// The story `choices` tells of `invariant`: its transcript, the violation's
// subject and detail (empty when the run does not show it).
Counterexample story(const run::RunSpec& base, const std::vector<std::uint64_t>& choices, const std::string& invariant) {
  run::RunSpec spec = base;
  spec.guide = nullptr;
  spec.record_trace = true;
  spec.choices = choices;
  const run::RunResult run = run_in_cell(spec);
  Counterexample cex;
  cex.choices = run.choices;
  if (const check::Violation* v = run.verdict.find(invariant)) {
    build_transcript(run, *base.scenario, *v, cex);
    cex.subject = v->subject;
    cex.detail = v->detail;
  }
  return cex;
}

// The counterexample of `invariant`: `failing` shrunk, when that keeps the
// preemptions and does not make the story longer, its transcript, and the
// commands that replay both.
Counterexample counterexample(const run::RunSpec& base, const Failing& failing, const std::string& invariant,
                              int budget) {
  run::RunSpec spec = base;
  spec.guide = nullptr;
  spec.record_trace = false;
  Counterexample cex = story(base, failing.fewest, invariant);
  if (budget > 0) {
    const ChoiceSequence shrunk = shrink_in_cell(spec, failing.fewest, invariant, budget);
    // Shrinking favours short and small choice sequences, not the transcript
    // the reader sees: a smaller sequence can hide fewer unrelated tasks, or
    // give its story to another order, and tell a longer one (alipay-trade-
    // closed's 5 steps became 12). Neither that nor a sequence with more
    // preemptions is what the reader wants first.
    if (count_preemptions(spec, shrunk) <= failing.preemptions) {
      Counterexample smaller = story(base, shrunk, invariant);
      if (!smaller.detail.empty() && (cex.detail.empty() || smaller.steps <= cex.steps)) cex = std::move(smaller);
    }
  }
  cex.preemptions = count_preemptions(spec, cex.choices);
  cex.found_at_bound = failing.found_at_bound;
  cex.shrunk = budget > 0;
  cex.replay_command = schedule_replay_command(base.handler->name, *base.scenario, failing.fewest, base.engine);
  cex.replay_shrunk_command = schedule_replay_command(base.handler->name, *base.scenario, cex.choices, base.engine);
  return cex;
}

}  // namespace

std::string schedule_replay_command(const std::string& handler, const gateway::Scenario& scenario,
                                    const std::vector<std::uint64_t>& choices, const engine::EngineChoice& engine) {
  std::string cmd = fmt::format("twice replay --handler {} {} --strategy exhaustive --schedule {}",
                                shell_quote(handler), scenario_replay_args(scenario), schedule_text(choices));
  return cmd + scenario_digest_args(scenario) + engine_replay_args(engine);
}

int count_preemptions(const run::RunSpec& spec, const std::vector<std::uint64_t>& choices) {
  PreemptionCounter counter(choices);
  run::RunSpec s = spec;
  s.guide = &counter;
  s.record_trace = false;
  (void)run_in_cell(s);
  return counter.preemptions();
}

CellResult explore_cell_exhaustively(const gateway::Scenario& scenario, const HandlerInfo& handler,
                                     const ExploreOptions& options, const Expectation& expected) {
  const auto started = std::chrono::steady_clock::now();
  CellResult cell;
  cell.handler = handler.name;
  cell.scenario = scenario.name + options.engine.cell_suffix();
  cell.expected = expected.violations;
  cell.expected_reason = expected.reason;
  cell.expectation_listed = expected.listed;

  sim::SearchBounds bounds;
  bounds.preemption_bound = options.strategy.preemption_bound;
  bounds.max_faults = options.strategy.max_faults;
  bounds.budget = options.budget;
  if (options.bounds_from_expected && expected.proved) {
    bounds.preemption_bound = expected.proved->preemption_bound;
    bounds.max_faults = expected.proved->max_faults;
  }
  // The bounds this cell is searched at (--prove: its own from the expected matrix).
  sim::StrategySpec searched = options.strategy;
  searched.preemption_bound = bounds.preemption_bound;
  searched.max_faults = bounds.max_faults;
  cell.strategy = sim::strategy_name(searched);
  bounds.reduce = options.reduce && can_reduce(handler, options.engine, bounds.triggers);
  sim::ExhaustiveSearch search(bounds);

  // The footprints are read from the operations' text: the trace is kept.
  run::RunSpec spec{&scenario, &handler, options.strategy, 0, std::nullopt, true};
  spec.engine = options.engine;
  std::map<std::string, Failing> found;
  while (search.start_run()) {
    if (options.stop && options.stop->load()) break;
    if (options.on_run) options.on_run("exploring", static_cast<int>(search.runs() + 1), 0);
    spec.guide = &search;
    const run::RunResult r = run_in_cell(spec);
    search.end_run();
    if (search.redundant()) continue;
    const int index = static_cast<int>(search.schedules());
    ++cell.seeds_run;
    cell.max_tasks = std::max(cell.max_tasks, static_cast<int>(r.tasks.size()));
    cell.max_steps = std::max(cell.max_steps, r.steps);
    if (!r.verdict.violations.empty()) {
      ++cell.failing_runs;
      cell.failing_run_indices.push_back(index);
    }
    std::vector<std::string> seen_here;
    for (const auto& v : r.verdict.violations) {
      if (std::find(seen_here.begin(), seen_here.end(), v.invariant) != seen_here.end()) continue;
      seen_here.push_back(v.invariant);
      auto [it, first] = found.try_emplace(v.invariant);
      Failing& f = it->second;
      if (first) {
        f.result.invariant = v.invariant;
        f.result.subject = v.subject;
        f.result.detail = v.detail;
        f.result.schedules_to_first = index;
      }
      if (first || search.preemptions() < f.preemptions) {
        f.fewest = r.choices;
        f.preemptions = search.preemptions();
      }
      ++f.result.failures;
    }
    if (options.stop_at_first_failure &&
        (options.stop_at_invariant.empty() ? !found.empty() : found.count(options.stop_at_invariant) > 0))
      break;
  }

  // Fewest preemptions first: each violation kind is reported from the
  // smallest bound whose search shows it, as a search by increasing bound
  // (0, 1, ..., K) would find it. The bound-K search runs first (a proof
  // needs it whatever it finds), so a cell that holds pays for no other; a
  // kind it found with p > 0 preemptions sends searches at bounds 0..p-1, in
  // order, each stopping once every kind still above its bound shows at it.
  // (With the reduction on, the bound-K search's own fewest need not be the
  // fewest: sleep sets may keep the order of a class that has more.)
  const auto above = [&found](int bound) {
    return std::any_of(found.begin(), found.end(), [bound](const auto& kv) { return kv.second.preemptions > bound; });
  };
  const int searched_bound = bounds.preemption_bound;
  for (int b = 0; (searched_bound < 0 || b < searched_bound) && above(b); ++b) {
    if (options.stop && options.stop->load()) break;
    sim::SearchBounds lower = bounds;
    lower.preemption_bound = b;
    sim::ExhaustiveSearch smaller(lower);
    while (smaller.start_run() && above(b)) {
      if (options.stop && options.stop->load()) break;
      if (options.on_run) options.on_run(fmt::format("searching bound {}", b), static_cast<int>(smaller.runs() + 1), 0);
      spec.guide = &smaller;
      const run::RunResult r = run_in_cell(spec);
      smaller.end_run();
      if (smaller.redundant()) continue;
      for (const auto& v : r.verdict.violations) {
        auto it = found.find(v.invariant);
        if (it == found.end() || it->second.preemptions <= smaller.preemptions()) continue;
        it->second.fewest = r.choices;
        it->second.preemptions = smaller.preemptions();
        it->second.found_at_bound = b;
      }
    }
  }
  for (auto& [name, f] : found)
    if (f.found_at_bound < 0) f.found_at_bound = f.preemptions;

  ExhaustiveVerdict verdict;
  verdict.schedules = search.schedules();
  verdict.runs = search.runs();
  verdict.reduction = bounds.reduce ? "sleep-sets" : "none";
  verdict.preemption_bound = bounds.preemption_bound < 0 ? -1 : bounds.preemption_bound;
  verdict.max_faults = bounds.max_faults;
  verdict.complete = search.complete() && !search.diverged();
  verdict.estimated_schedules = search.estimated_schedules();
  verdict.interrupted = !verdict.complete && options.stop && options.stop->load();
  if (!verdict.complete && !verdict.interrupted) {
    // The budget ran out: Knuth's random probes estimate the bounded tree
    // (sim/knuth_estimate.h), from a fixed seed so that the report repeats.
    run::RunSpec probe_spec = spec;
    probe_spec.record_trace = false;
    const double probed = sim::knuth_estimate(bounds, kProbeSeed, kProbes, [&](sim::KnuthProbe& probe) {
      if (options.on_run) options.on_run("estimating", 0, 0);
      probe_spec.guide = &probe;
      (void)run_in_cell(probe_spec);
    });
    verdict.estimated_schedules = std::max(probed, static_cast<double>(verdict.schedules));
  } else if (verdict.interrupted) {
    // A stop runs no probes: what is known is a lower bound, the schedules
    // run. The search's own guess (each unexplored sibling as large as the
    // explored ones) read as an estimate, about twice what had run.
    verdict.estimated_schedules = static_cast<double>(verdict.schedules);
  }
  cell.exhaustive = verdict;

  for (auto& [name, f] : found) {
    if (options.on_run) options.on_run("shrinking " + name, f.result.schedules_to_first, 0);
    f.result.counterexample = counterexample(spec, f, name, options.shrink ? options.shrink_budget : 0);
    if (!f.result.counterexample.detail.empty()) {
      f.result.subject = f.result.counterexample.subject;
      f.result.detail = f.result.counterexample.detail;
    }
    cell.violations.push_back(std::move(f.result));
  }
  if (const auto& r = expected.proved) {
    const bool wide_enough = (bounds.preemption_bound < 0 || (r->preemption_bound >= 0 &&
                                                              bounds.preemption_bound >= r->preemption_bound)) &&
                             bounds.max_faults >= r->max_faults;
    if (wide_enough || options.prove) cell.proof_required = r;
  }
  cell.matched = cell.observed() == cell.expected && !cell.proof_missing();
  cell.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return cell;
}

}  // namespace twice::explore
