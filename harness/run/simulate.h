// simulate(): one run of one handler against one scenario, from one seed (or
// one recorded choice sequence). Wires the scheduler, the database, the lock
// service, the gateway and the checker; returns the verdict and the trace.
// A run is a pure function of its RunSpec. Thread-safe: runs share nothing, so
// several may go on at once in different threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/checker.h"
#include "endpoint/delivery.h"
#include "engine/engine_choice.h"
#include "gateway/scenario.h"
#include "services/services.h"
#include "sim/choice_guide.h"
#include "sim/strategy.h"
#include "sim/trace.h"
#include "twice/handler.h"
#include "twice/status_or.h"

namespace twice::run {

struct RunSpec {
  const gateway::Scenario* scenario = nullptr;
  const HandlerInfo* handler = nullptr;
  sim::StrategySpec strategy;
  std::uint64_t seed = 0;
  // When set, replays this choice sequence instead of drawing from `seed`.
  std::optional<std::vector<std::uint64_t>> choices;
  // Off: RunResult::trace stays empty and no trace text is built. The run
  // itself is the same; the explorer turns it off where nobody reads a trace.
  bool record_trace = true;
  // Where the run's database lives; the default is a SQLite file, as ever.
  engine::EngineChoice engine = {};
  // On SQLite, a run uses its thread's database file and connections, kept
  // from the last run and reset in place (env/run_database.h). On: a file and
  // connections of its own, opened for this run and closed after it, as
  // before; the tests compare the two.
  bool fresh_connections = false;
  // The exhaustive search deciding this run's draws (sim/choice_guide.h); the
  // strategy must then be kExhaustive. Unset under kExhaustive: the run
  // replays `choices` the exhaustive way (every duration at the end its tempo draw names).
  sim::ChoiceGuide* guide = nullptr;
  // Called with each trace event as the run records it (sim::Trace::set_listener).
  std::function<void(const sim::TraceEvent&)> on_event = nullptr;
};

using TaskInfo = endpoint::TaskInfo;

struct RunResult {
  std::uint64_t seed = 0;
  check::Verdict verdict;
  sim::Trace trace;
  std::vector<std::uint64_t> choices;  // replaying these reproduces the run
  std::map<int, TaskInfo> tasks;
  int steps = 0;
  int choice_points = 0;  // steps at which more than one task could run
  std::uint64_t interleaving = 0;  // a hash of the order tasks ran in (Scheduler::interleaving)
  Micros end_time = 0;
  std::vector<services::AppliedEffect> effects;  // what the external services applied, in order

  bool has(std::string_view invariant) const;
};

// An error when the run cannot start or go on: a handler's schema the
// database refuses, an unknown gateway profile, no server for the engine.
// What a handler does wrong (throws, hangs, double-credits) is part of the
// result, never an error.
StatusOr<RunResult> simulate(const RunSpec& spec);

}  // namespace twice::run
