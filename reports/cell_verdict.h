// What one matrix cell means for a reader, shared by every report format so
// the Markdown, JUnit and HTML reports never disagree: a pass, a known bug
// caught as scenarios/expected.toml says it should be, or one of the ways a
// cell can differ from that expectation. Pure functions, any thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/model.h"

namespace twice::reports {

enum class CellVerdict {
  kPass,        // no violation, none expected
  kCaught,      // the expected violations, exactly: a canary doing its job
  kRegression,  // violations where none were expected
  kCanaryLost,  // expected violations, none observed
  kMismatch,    // violations observed, but not the expected set
  kNotRun,      // no result (an interrupted run)
  kFailed,      // did not finish (crashed, exited, hung, an error) or keeps state across runs
  kNotProved,   // passed, but the expected matrix requires it proved and this exhaustive run did not prove it
};

CellVerdict verdict_of(const results::CellResult* cell);
// Why a known bug "no longer caught" in this run may be no regression: fewer
// seeds than scenarios/expected.toml holds at (100), or an exhaustive search
// its budget ended before every schedule. Each {what, what to do}, plain
// text; none when no cell misses a known bug for such a reason.
std::vector<std::pair<std::string, std::string>> unseen_bug_caveats(const results::MatrixResult& m);
// What a red run's reader does when a difference is intended, a sentence: "If
// a difference is intended, change <shown_path> to say so (docs/ci.md, ...).",
// or "write" it when there was none. `shown_path` escaped by the caller.
std::string intended_difference_hint(const results::MatrixResult& m, const std::string& shown_path);
// ", 2 of them cut short before all their seeds" for the cells a stop ended
// early (CellResult::cut_short); empty when there are none. No markup.
std::string cut_short_clause(const results::MatrixResult& m);
// What the cells were compared with, for a sentence ("differs from ...",
// "matrix matches ..."): `shown_path`, the expected matrix's path as the
// caller escaped it for its format; or, when there was no such file, "the
// default that every cell passes (there is no <shown_path>)".
std::string compared_with(const results::MatrixResult& m, const std::string& shown_path);
// True for a matrix run under the exhaustive strategy (--strategy exhaustive,
// --prove): its cells ran schedules, not seeds, and no option of the seed
// mode (--seeds, --seed) was read.
bool is_exhaustive(const results::MatrixResult& m);
// What a cell's runs are called in a sentence: "schedules" for an exhaustive
// search, "runs" for seeded strategies.
const char* runs_noun(const results::CellResult& cell);
// True for the verdicts that make `twice run` exit 1.
bool differs(CellVerdict v);
// "pass", "caught", "regression", "canary lost", "mismatch", "not run", "failed", "not proved".
const char* verdict_name(CellVerdict v);

// "double_credit 30/200, lost_update 2/200", or "pass"; a failed cell's first
// verdict ("crashed: SIGSEGV") when it has no violation to show.
std::string observed_summary(const results::CellResult& cell);
// "double_credit+lost_update", or "pass".
std::string expected_summary(const results::CellResult& cell);
// What kind of difference a differing cell shows, as the reports label it:
// " (a regression)", " (a known bug is no longer caught)", " (not expected:
// double_credit)"; empty for other cells.
std::string difference_label(const results::CellResult& cell);
// One sentence on why a differing cell differs: "expected pass, observed
// double_credit 3/200 (a regression)". Empty for cells that match.
std::string mismatch_sentence(const results::CellResult& cell);
// An exhaustive search's verdict (--strategy exhaustive), empty for other
// cells: "proved: all 1234 schedules (after sleep-set reduction, of 2000 runs)
// up to 2 preemptions and 1 fault hold", "explored 5000 of about 81000
// schedules ...", or "all 40 schedules ... searched: double_credit in 3".
std::string exhaustive_sentence(const results::CellResult& cell);
// "proved up to 2 preemptions and 1 fault": what [proved] in the expected
// matrix requires (a sentence says "required: " before it).
std::string proof_requirement_text(const results::ProofRequirement& r);
// Why a cell required proved is not: "explored 20000 schedules of about
// 81000 (the budget ran out)", or "a search up to 1 preemption and 1 fault,
// narrower than required (run with --preemption-bound 2 --max-faults 1)".
// Empty when the proof is there or not required.
std::string proof_shortfall(const results::CellResult& cell);

// "Shrunk to 4 steps (39 steps of unrelated tasks hidden)", "Not shrunk (a
// shrink budget of 0): 16 steps", or "Shrunk to 0 steps: no handler task
// ran for it": how long a counterexample's story is, for the reports that
// say it in a sentence of their own.
std::string length_sentence(const results::Counterexample& cex);

// The violation a cell is read for: the one most runs showed (the first
// found on a tie) among those the expected matrix does not list (what made
// a regression or a mismatch), or among all when it lists every one. Null
// for a cell without violations.
const results::ViolationResult* headline_violation(const results::CellResult& cell);

// "O-1 ship (warehouse): applied 2 times: T3 at 0.120s, T9 at 4.010s  <-- wrong": one order's
// effect as a counterexample lists it, in plain text (each writer escapes it for its format).
std::string effect_line(const results::EffectRecord& effect);

// "the handler left 2 processes running when the cell ended; twice killed
// them": what twice did about the processes a handler forked and left
// running (a daemon, a child it never waited for), for a cell, a replay or a
// stress run (`ended`: "cell", "replay", "run"). Not a verdict. Empty when
// `processes` is 0, so that a report of handlers that leave none is as it was.
std::string processes_left_sentence(int processes, std::string_view ended);

// Which server produced a server engine's verdicts, in one line: "mariadb
// server 10.11.19-MariaDB-0+deb12u1, innodb_snapshot_isolation=OFF, started
// by twice" (or "..., at mysql://app@db/pay"). `quoted` writes what the
// server and the user said (version, setting, URL) for the report's format.
std::string server_sentence(const results::EngineServer& server,
                            const std::function<std::string(std::string_view)>& quoted);

}  // namespace twice::reports
