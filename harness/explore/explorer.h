// Explorer: runs a handler against a scenario under many seeds, counts what
// broke and how soon, and shrinks the first failure of each invariant to a
// counterexample. explore_matrix() does that for every (handler, scenario)
// cell, on several threads, in a deterministic order of results.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine_choice.h"
#include "explore/expected.h"
#include "explore/results.h"
#include "explore/shrink.h"
#include "gateway/scenario.h"
#include "process/stop_now.h"
#include "run/simulate.h"
#include "sim/strategy.h"
#include "twice/handler.h"

namespace twice::explore {

struct ExploreOptions {
  int seeds = 200;
  std::uint64_t base_seed = 1;
  // Set: one run of a cell, of exactly this seed (twice::testing::check_run),
  // instead of `seeds` runs of seeds derived from `base_seed`.
  std::optional<std::uint64_t> only_seed;
  sim::StrategySpec strategy;
  bool shrink = true;
  int shrink_budget = 1500;  // runs spent shrinking one counterexample
  int jobs = 1;              // cells explored at once
  bool stop_at_first_failure = false;  // for canary tests: enough to know it is caught ...
  std::string stop_at_invariant;       // ... with this invariant (empty: any)
  // Called after each cell, from any thread (serialised by the explorer).
  std::function<void(const CellResult&, int done, int total)> on_cell;
  // Set (e.g. by SIGINT) to stop after the cells under way.
  const std::atomic<bool>* stop = nullptr;
  // Stopped (StopNow::stop(), by a second SIGINT) to stop now: a cell under
  // way ends between two of its runs (in a child process: the child is
  // killed by whoever stopped) and is not reported, neither as finished with
  // fewer runs nor as a failure of its handler, even if its result comes in
  // after the stop; the cells finished before are. Every cell (not its
  // re-checks) starts and finishes through it, so its counts are exactly the
  // cells under way and written. For explore_matrix(),
  // explore_matrix_isolated() and explore_cell(), which throws CellStopped.
  process::StopNow* stop_now = nullptr;
  // Called before each run of a cell, on the thread exploring it: `phase` is
  // "exploring" or "shrinking <invariant>", `run` the 1-based index of the
  // run (of the run shrunk from, while shrinking). A cell's child process
  // reports this to its parent, which names the run when the child dies.
  std::function<void(std::string_view phase, int run, std::uint64_t seed)> on_run;
  // About once a second for each cell under way: what it is doing (on_run's
  // phase and run) and for how many seconds it has run. So a long cell (an
  // exhaustive search of a million schedules) is never silent. With cells in
  // child processes (explore_matrix_isolated), from the thread that called
  // it; in this process (explore_matrix, a server engine's cells), from the
  // cells' threads, one at a time.
  std::function<void(const std::string& handler, const std::string& scenario, std::string_view phase, int run,
                     double seconds)>
      on_progress;
  // The engine every run uses (default SQLite). On another engine a cell's
  // scenario is named "scenario@postgres/read-committed", in the results, the
  // reports and the expected matrix alike.
  engine::EngineChoice engine = {};
  // --strategy exhaustive (explore/exhaustive_cell.h): runs per cell before
  // it stops with "explored N of about M" (0: no budget), and whether sleep
  // sets prune equivalent orders. `seeds` and `base_seed` are not used.
  long budget = 0;
  bool reduce = true;
  // `twice run --prove` without --preemption-bound or --max-faults: a cell
  // the expected matrix requires proved is searched at the bounds it lists
  // (Expectation::proved), the others at `strategy`'s.
  bool bounds_from_expected = false;
  // `twice run --prove`: a cell required proved is judged on its proof even
  // when searched at narrower bounds than required (it then is not proved).
  // Without it, such a search cannot speak to the proof and is judged on its
  // violations alone.
  bool prove = false;
  // Random and PCT: count the distinct interleavings the seeds ran
  // (CellResult::distinct_schedules); off by default, so the default report
  // stays as it was.
  bool coverage = false;
};

// The strategy a whole matrix ran under, for its reports: `options.strategy`'s
// name, or under --prove without bounds, that each cell was searched at the
// bounds the expected matrix requires of it (CellResult::strategy says which).
std::string matrix_strategy_name(const ExploreOptions& options);

// What `twice replay --shrunk` spends shrinking unless told otherwise; a
// counterexample shrunk with another budget prints `--shrink-budget N` in its
// replay command, so that the replay shows the same steps.
inline constexpr int kReplayShrinkBudget = 500;
// The most runs spent shrinking any violation of a run that is also `stuck`,
// whatever the budget: each candidate plays a loop to its step budget, and a
// loop rarely gets shorter.
inline constexpr int kStuckShrinkBudget = 100;

// What a replay command says to run on `engine` as the run did: "" for SQLite, else
// " --engine E --isolation I", and " --engine-url U" for a server --engine-url named: U shell-quoted,
// without its password, and then a shell comment naming the variable to set for it (PGPASSWORD,
// MYSQL_PWD), so that the command is pasted whole, and runs where that is set.
std::string engine_replay_args(const engine::EngineChoice& engine);

// The server `engine` runs on, as the reports, a replay's header, stress mode
// and the test API name it: its version, the settings a verdict is known to
// depend on, and the --engine-url without its password (empty: twice started
// it). None for SQLite. Its server must have started (the version is empty before).
std::optional<results::EngineServer> engine_server(const engine::EngineChoice& engine);

// `command`, a `twice replay` command, with `--plugin PLUGIN` first, so that
// it loads the library a plugin's handler is in: `twice` replays only the
// handlers it can load. Other commands are left as they are.
void add_plugin_to_replay(std::string& command, const std::string& plugin);

// "twice replay --handler H --scenario S [--reconciler] --seed N [--strategy pct --pct-depth D] [--shrunk
//  [--invariant V] [--shrink-budget B]] [--scenario-digest X] [--engine E --isolation I [--engine-url U]]". `invariant`: the violation
// to shrink for, given only when it is not the run's first (what replay shrinks for unless told).
std::string replay_command(const std::string& handler, const gateway::Scenario& scenario, std::uint64_t seed,
                           const sim::StrategySpec& strategy, bool shrunk, int shrink_budget = kReplayShrinkBudget,
                           const engine::EngineChoice& engine = {}, const std::string& invariant = {});
// A run of a cell that could not start (simulate()'s error: a schema the
// database refuses, no server for the engine). The cell's runs share that
// setup, so it ends the cell, which then reports the message as its verdict
// ("error: ..."); thrown and caught within explore/.
struct CellError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A cell ended by ExploreOptions::stop_now: not a std::exception, so that no
// handler of errors takes it for a verdict; caught by explore_matrix().
struct CellStopped {};
// simulate(), throwing CellError on its error; throws CellStopped instead of
// starting the run once the stop_now of the explore_cell() under way on this
// thread is set (every run of a cell comes through here: its seeds, PCT's
// measure, shrinking, an exhaustive search).
run::RunResult run_in_cell(const run::RunSpec& spec);

// `start` shrunk for `invariant` within `budget` candidate runs of `spec`
// (each run_in_cell, its trace not recorded): the simplest choices that still
// show it. A candidate proposed again is answered from memory (a run is a
// function of its choices) and still counts against the budget, so the
// shrink takes the same path either way.
ChoiceSequence shrink_in_cell(run::RunSpec spec, const ChoiceSequence& start, const std::string& invariant,
                              int budget);

// PCT's k for a cell: the most real choices (steps where more than one task
// could run) in a few calibration runs of the random strategy, from fixed
// seeds, so that `twice run` and `twice replay` measure the same.
int measure_pct_steps(const gateway::Scenario& scenario, const HandlerInfo& handler);
// `strategy` with PCT's k measured when it is not given (pct_max_steps <= 0).
sim::StrategySpec resolve_strategy(const sim::StrategySpec& strategy, const gateway::Scenario& scenario,
                                   const HandlerInfo& handler);
// How a scenario is named on the command line: its name when bundled, else its path.
std::string scenario_ref(const gateway::Scenario& scenario);
// What a replay command says to load the scenario as the run did:
// "--scenario REF", and " --reconciler" when the run added the reconciler job.
std::string scenario_replay_args(const gateway::Scenario& scenario);
// " --scenario-digest D" for a scenario read from a file (its digest,
// gateway/scenario_digest.h), which a replay command ends with, before the
// engine's options: `twice replay` then refuses a file changed since the run,
// which would replay another run under the same seed. "" for one built in code.
std::string scenario_digest_args(const gateway::Scenario& scenario);

// Shrinks the failing run `seed` for `invariant`. Deterministic.
Counterexample shrink_counterexample(const gateway::Scenario& scenario, const HandlerInfo& handler,
                                     const sim::StrategySpec& strategy, std::uint64_t seed,
                                     const std::string& invariant, int budget,
                                     const engine::EngineChoice& engine = {});

// A cell that did not finish: its identity and expectation, no runs counted,
// `failure` as its verdict, never matched.
CellResult unfinished_cell(const gateway::Scenario& scenario, const HandlerInfo& handler, const ExploreOptions& options,
                           const Expectation& expected, CellFailure failure);

CellResult explore_cell(const gateway::Scenario& scenario, const HandlerInfo& handler, const ExploreOptions& options,
                        const Expectation& expected);

MatrixResult explore_matrix(const std::vector<const HandlerInfo*>& handlers,
                            const std::vector<gateway::Scenario>& scenarios, const ExploreOptions& options,
                            const ExpectedMatrix& expected);

}  // namespace twice::explore
