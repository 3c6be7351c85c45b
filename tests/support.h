// Test support: scenarios built in code, handlers by name, one-call runs.
#pragma once

#include <string>
#include <vector>

#include "gateway/scenario.h"
#include "run/simulate.h"
#include "twice/handler.h"

namespace twice::testing {

// scenarios/<name>.toml from the source tree; throws (failing the test) when it does not load.
gateway::Scenario bundled_scenario(const std::string& name);
// One order (O-1 for alice, 100 CNY) and no faults; tweak the fields.
gateway::Scenario one_order_scenario();
// Up to `copies` network copies of one notification, all arriving at once,
// each sent with probability `p` (below 1, the copies are shrinkable faults).
gateway::Scenario concurrent_copies_scenario(int copies, double p = 1.0);
// Two orders of one user paid at the same moment.
gateway::Scenario two_topups_scenario();

const HandlerInfo& handler(const std::string& name);
run::RunResult run_seed(const gateway::Scenario& s, const std::string& handler_name, std::uint64_t seed);
run::RunResult run_script(const gateway::Scenario& s, const std::string& handler_name, std::vector<int> script);
// The same, with the interleaving forced by named steps (sim::ScriptStep).
run::RunResult run_steps(const gateway::Scenario& s, const std::string& handler_name,
                         std::vector<sim::ScriptStep> steps);
run::RunResult run_steps(const gateway::Scenario& s, const HandlerInfo& handler, std::vector<sim::ScriptStep> steps);
std::vector<std::string> invariants_of(const run::RunResult& r);
// The trace lines of one task, in order, without timestamps: "sql SELECT ... -> ...".
std::vector<std::string> steps_of(const run::RunResult& r, int task);

}  // namespace twice::testing
