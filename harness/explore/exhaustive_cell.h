// One cell explored exhaustively (--strategy exhaustive): every schedule of
// the handler against the scenario within the bounds (sim/exhaustive_search.h),
// each run once, each checked. With no violation and the tree exhausted, the
// cell is proved within its bounds; a violation comes with the failing
// schedule that has the fewest preemptions, shrunk, and replayable from its
// printed schedule (`twice replay --strategy exhaustive --schedule ...`).
// Called by explore_cell() on the thread (or cell process) exploring the cell.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "explore/explorer.h"

namespace twice::explore {

CellResult explore_cell_exhaustively(const gateway::Scenario& scenario, const HandlerInfo& handler,
                                     const ExploreOptions& options, const Expectation& expected);

// "twice replay --handler H --scenario S --strategy exhaustive --schedule 0x4.1.0x9 [--scenario-digest X]"
std::string schedule_replay_command(const std::string& handler, const gateway::Scenario& scenario,
                                    const std::vector<std::uint64_t>& choices, const engine::EngineChoice& engine = {});

// The preemptions of a schedule: how often it switches away from a task that
// could have gone on. Runs it once.
int count_preemptions(const run::RunSpec& spec, const std::vector<std::uint64_t>& choices);

}  // namespace twice::explore
