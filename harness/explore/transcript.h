// Transcript: turns a run's trace into a Counterexample a person reads in ten
// seconds: one column per task involved in the violation, one row per step,
// what the gateway did, and the balances against what they should be.
#pragma once

#include "check/violation.h"
#include "explore/results.h"
#include "gateway/scenario.h"
#include "run/simulate.h"

namespace twice::explore {

// Fills columns, rows, steps, gateway and balances of `out` from `run`,
// keeping the tasks that concern `violation`'s subject (an order, or every
// order of an account).
void build_transcript(const run::RunResult& run, const gateway::Scenario& scenario,
                      const check::Violation& violation, Counterexample& out);

}  // namespace twice::explore
