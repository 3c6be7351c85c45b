// The result model: what a matrix run found, as plain data. Report writers
// (reports/) read only this header (the twice_results library); they never
// see the simulator. The explorer fills it in (explore/results.h names these
// types in its own namespace).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace twice::results {

// One line of a counterexample transcript, in the column of the task that ran it.
struct TranscriptRow {
  int column = 0;          // index into Counterexample::columns
  std::string time;        // "0.012s"
  std::string kind;        // "sql", "lock", "clock", "note", "task"; "cut": steps left out (below)
  std::string text;        // the statement with its parameters inlined, or what happened
  std::string result;      // what it returned
  bool step = false;       // a scheduling point (counted in Counterexample::steps)
  // A "cut" row stands for this many steps of its task's column, left out
  // of a long transcript (explore/transcript.h says which); the reports
  // number the steps after it as if they were there.
  int skipped = 0;
};

// One effect an external service applied (or had to) for one order shown in
// a counterexample: the harness's record, as the reports list it per order.
struct EffectRecord {
  std::string order_no;
  std::string service;             // "warehouse"
  std::string effect;              // "ship"
  std::vector<std::string> applied;  // each time it was applied: "T3 at 0.120s key O-1:ship"
  bool required = false;           // the scenario requires it of every paid order ([checks] effects)
};

struct Counterexample {
  std::uint64_t seed = 0;               // the run it was shrunk from
  std::vector<std::uint64_t> choices;   // the shrunk choice sequence
  int steps = 0;                        // scheduling points of the tasks shown (those cut out included)
  int hidden_steps = 0;                 // scheduling points of tasks not involved
  std::vector<std::string> columns;     // "T1: notify O-1 #1"
  std::vector<TranscriptRow> rows;
  std::vector<std::string> gateway;     // what the gateway did meanwhile, one line each
  std::vector<std::string> balances;    // "alice: balance 200, should be 100"
  std::vector<EffectRecord> effects;    // per order shown, what the services applied; empty without services
  std::string replay_command;           // replays the original failing seed
  std::string replay_shrunk_command;    // replays this shrunk counterexample
  // Shrinking ran on it (a shrink budget above 0); false: it is the failing
  // run itself, as found.
  bool shrunk = false;
  std::string subject;                  // the violation as this transcript shows it
  std::string detail;
  int preemptions = -1;                 // the exhaustive search's: preemptions in `choices` (-1: other strategies)
  // The exhaustive search's: the smallest preemption bound whose search
  // showed this violation, bounds searched in increasing order (-1: other
  // strategies). No schedule with fewer preemptions showed it.
  int found_at_bound = -1;
};

struct ViolationResult {
  std::string invariant;           // "double_credit"
  std::string subject;             // "O-1"
  // One sentence: the shrunk counterexample's (it may be about another order
  // than the first failing run), or the first failing run's when not shrunk.
  std::string detail;
  int failures = 0;                // runs that showed it
  int schedules_to_first = 0;      // 1-based index of the first run that showed it
  std::uint64_t seed = 0;          // that run's seed
  Counterexample counterexample;
};

// A cell that did not finish the way cells do: the process running it died
// or stopped making progress (explore/cell_process.h), the harness failed on
// it (a schema that does not parse), or a counterexample it found did not
// reproduce from fresh state (the handler keeps state across runs). Such a
// cell never matches the expected matrix.
struct CellFailure {
  // "crashed: SIGSEGV", "exited: 0", "hung: no scheduling point for 30 s",
  // "error: the handler's schema: ...", "keeps state across runs".
  std::string verdict;
  std::string detail;           // one sentence for the reader
  std::string phase;            // what was running: "exploring", "shrinking double_credit", "re-checking"
  int run = 0;                  // 1-based index of the run under way (0: none)
  std::uint64_t seed = 0;       // that run's seed
  std::string replay_command;   // replays that run (empty when no run was under way)
};

// What the exhaustive search (--strategy exhaustive) of a cell ran: with no
// violation and `complete`, a proof within the bounds.
struct ExhaustiveVerdict {
  long schedules = 0;        // distinct schedules run: after reduction when `reduction` is not "none"
  long runs = 0;             // runs made, those the reduction found to repeat a schedule included
  std::string reduction;     // "sleep-sets" or "none"
  int preemption_bound = 2;  // -1: no bound
  int max_faults = 1;
  bool complete = false;     // every schedule within the bounds ran (false: the budget ran out, or interrupted)
  bool interrupted = false;  // a stop (Ctrl-C, SIGTERM) ended the search before it was complete
  // The schedules within the bounds, before reduction, by Knuth's random
  // probes when the budget ran out (sim/knuth_estimate.h); = schedules when complete.
  double estimated_schedules = 0;
};

// A cell the expected matrix requires to be proved ([proved."<handler>"] in
// scenarios/expected.toml): an exhaustive search of it must run every
// schedule within these bounds, or wider ones, and find no violation.
struct ProofRequirement {
  int preemption_bound = 2;  // -1: no bound
  int max_faults = 1;
};

struct CellResult {
  std::string handler;
  std::string scenario;
  std::string strategy;            // "random", "pct(d=2)"
  int seeds_run = 0;
  int failing_runs = 0;
  // 1-based indices of the runs that showed any violation: the raw material
  // for failure rates, intervals and schedules-to-first-failure statistics.
  std::vector<int> failing_run_indices;
  int max_tasks = 0;   // most tasks seen in one run (PCT's n)
  int max_steps = 0;   // most scheduling points seen in one run (PCT's k)
  std::vector<ViolationResult> violations;  // sorted by invariant name
  std::vector<std::string> expected;        // invariants expected; empty: pass
  std::string expected_reason;
  bool expectation_listed = false;          // false: not in expected.toml, assumed pass
  bool matched = false;                     // observed invariants == expected
  std::vector<CellFailure> failures;        // empty for a cell that finished normally
  // Wall-clock seconds spent exploring and shrinking this cell, for the JUnit
  // report's time attribute. Not in the JSON report: it would make two runs'
  // reports differ where nothing else does.
  double seconds = 0;
  std::optional<ExhaustiveVerdict> exhaustive;  // --strategy exhaustive only
  // --coverage (random, PCT): how many distinct interleavings the seeds ran
  // (a hash of the order tasks ran in); -1 when not counted.
  int distinct_schedules = -1;
  // Set on exhaustive cells the expected matrix requires proved (other
  // strategies cannot prove, so they are judged on their violations alone).
  std::optional<ProofRequirement> proof_required;
  // Processes the handler forked and left running when the cell's runs ended
  // (a daemon, a forgotten child): twice killed them. Not a verdict: a cell
  // that leaks processes still passes or fails on its invariants.
  int processes_left = 0;
  // A stop (Ctrl-C, SIGTERM) ended its seeds early: it ran seeds_run of the
  // seeds asked, and its verdict is of those alone (the matrix is interrupted).
  bool cut_short = false;
  std::vector<std::string> observed() const;
  // True for a cell required proved that this run did not prove: a
  // violation, the budget ran out, the cell failed, or its bounds were
  // narrower than those required.
  bool proof_missing() const;
};

// A database server the cells of a server engine ran on: which one produced
// their verdicts (none for SQLite). Its settings are those a verdict is known
// to depend on (MariaDB's innodb_snapshot_isolation), as the server had them.
struct EngineServer {
  std::string engine;   // "postgres", "mariadb"
  std::string version;  // as the server says it: "15.14 (Debian 15.14-0+deb12u1)", "10.11.19-MariaDB-0+deb12u1"
  std::string url;      // --engine-url without its password; empty: the server twice started
  std::vector<std::pair<std::string, std::string>> settings;  // {"innodb_snapshot_isolation", "OFF"}
};

struct MatrixResult {
  std::vector<std::string> handlers;
  std::vector<std::string> scenarios;
  std::vector<CellResult> cells;   // handler-major, in the order above
  std::string strategy;
  int seeds = 0;
  std::uint64_t base_seed = 0;
  bool interrupted = false;        // stopped early (Ctrl-C): the cells here are complete, others missing
  // The expected matrix this result was compared with, as the user should read it.
  std::string expected_path = "scenarios/expected.toml";
  // False when there was no file at expected_path: every cell was then
  // expected to pass, and the reports say so instead of naming a file as read.
  bool expected_found = true;
  std::vector<EngineServer> servers;  // one per server engine the cells ran on, in run order; none on SQLite
  bool all_matched() const;
  // The one place a cell joins the matrix: `cell` is what came of it (none:
  // it never ran or did not finish, because of a stop). A missing cell marks
  // the matrix interrupted, and so does an exhaustive cell a stop cut short:
  // it explored part of its tree, which is no proof and no clean pass.
  void add(std::optional<CellResult> cell);
  const CellResult* cell(const std::string& handler, const std::string& scenario) const;
};

}  // namespace twice::results
