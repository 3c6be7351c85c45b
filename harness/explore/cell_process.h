// Cell isolation: explore_matrix() with each cell (handler × scenario, all its
// seeds and its shrinking) run in a child process of its own, so that a
// handler under test that crashes, exits or hangs takes down its cell, never
// the run. The child sends its CellResult back over a pipe and notes each run
// it starts in memory shared with the parent; a child that dies by a signal, exits without a result
// or stops reaching scheduling points for `timeout_seconds` becomes its cell's
// verdict ("crashed: SIGSEGV", "exited: 0", "hung: no scheduling point for
// 30 s") naming the phase, run and seed under way, with a replay command.
//
// Each counterexample found is then re-run alone in a fresh child: when it
// does not show its violation there, the cell says the handler keeps state
// across runs, or, when it was the first run of its process, that it is
// nondeterministic (its printed replay would not show what was reported).
//
// The children are contained processes (explore/contained_process.h): each in
// a process group of its own, killed when twice dies, its stdout on twice's
// stderr. A cell's result is taken when its process exits, and whatever it
// left running in its group is killed then. A cell that the user's interrupt
// ended while twice was stopping is not run, not failed; so is one that a
// stop now (ExploreOptions::stop_now) killed.
//
// Threads: call from one thread. The parent forks and waits from that thread
// only and starts no other (see cell_process.cpp for why); `options.jobs`
// children run at once. Results, and so every report, are the same as
// explore_matrix()'s for handlers that neither crash nor keep state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "explore/expected.h"
#include "explore/explorer.h"
#include "explore/results.h"
#include "gateway/scenario.h"
#include "twice/handler.h"

namespace twice::explore {

struct IsolationLimits {
  // A child that reaches no scheduling point (and starts no run) for this long is hung.
  int timeout_seconds = 30;
  // Address space of each child (setrlimit RLIMIT_AS); 0: no limit. Past it,
  // an allocation fails and the cell says "out of memory".
  std::uint64_t memory_limit_bytes = 0;
};

// The verdicts of a counterexample that a fresh process did not show again:
// a finding about the handler (state kept across runs, nondeterminism), not a
// cell that did not finish.
inline constexpr std::string_view kKeepsStateVerdict = "keeps state across runs";
inline constexpr std::string_view kNondeterministicVerdict = "nondeterministic";
inline bool not_shown_again(const CellFailure& f) {
  return f.verdict == kKeepsStateVerdict || f.verdict == kNondeterministicVerdict;
}

MatrixResult explore_matrix_isolated(const std::vector<const HandlerInfo*>& handlers,
                                     const std::vector<gateway::Scenario>& scenarios, const ExploreOptions& options,
                                     const IsolationLimits& limits, const ExpectedMatrix& expected);

// The wire format of a CellResult between the child and its parent (CBOR: no
// UTF-8 check, so a handler's raw bytes come back as they were). decode
// returns false on a malformed message.
std::string encode_cell(const CellResult& cell);
bool decode_cell(std::string_view bytes, CellResult& cell);

}  // namespace twice::explore
