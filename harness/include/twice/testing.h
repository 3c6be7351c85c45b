// The exactly-once check of one handler, called from your own test suite.
//
// check_exactly_once() runs a handler against every bundled scenario (and the
// scenario files you name) under many seeds, on the same simulator, checker
// and shrinker as `twice run`. It returns a Report: passed, or a message with
// each violation's shrunk counterexample, the seed that showed it and the
// `twice replay` command that prints it again. check_run() does the same for
// one (scenario, seed), for property-based tests.
//
// Framework-neutral and exception-free: bad input (a missing scenario file)
// comes back as a failed Report saying what is wrong. twice/gtest.h wraps this
// in GoogleTest assertions, twice/rapidcheck.h in a RapidCheck generator.
//
// Threads: runs share nothing, so a check explores several scenarios at once
// (Options::jobs, as child processes or as threads) and several checks may run
// at once (uncontained then: see Options::contain). The result is the same
// for any number of jobs: every run is a function of its seed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "twice/handler.h"

// The twice::twice CMake target defines this to the installed scenarios folder
// (<prefix>/share/twice/scenarios), or the source tree's when used in-tree.
#ifndef TWICE_BUNDLED_SCENARIOS_DIR
#define TWICE_BUNDLED_SCENARIOS_DIR ""
#endif

namespace twice::testing {

struct Options {
  // Runs (schedules) per scenario; run i uses a seed derived from `seed` and i,
  // so the same Options give the same runs, on any machine.
  int seeds = 200;
  std::uint64_t seed = 1;
  // Every bundled scenario, when true, but those named in `skip`: scenarios
  // your handler is not answerable for, each best with a comment saying why
  // (lost-notifications: "our reconciler is tested on its own").
  bool bundled = true;
  std::vector<std::string> skip;
  // Also the bundled scenarios that require effects beyond the database
  // ([checks] effects: ship, mail, decrement through Env::call). Set it when
  // your handler causes them; off, those are left out, since a handler that
  // ships nothing (a wallet top-up) would fail them all with lost_effect.
  // Scenarios named in `scenarios` always run. (scenario_refs() applies it,
  // so gen_run() draws from the same selection.)
  bool effects = false;
  // More scenarios: .toml files (format: docs/scenarios.md), folders of them,
  // or names of bundled ones ("concurrent-duplicates", handy with bundled = false).
  std::vector<std::string> scenarios;
  // "random", or "pct" (probabilistic concurrency testing, bug depth pct_depth).
  std::string strategy = "random";
  int pct_depth = 2;
  // Runs spent shrinking each counterexample; 0 shows the failing run unshrunk.
  int shrink_budget = 1500;
  // Scenarios explored at once; 0: one per core.
  int jobs = 0;
  // Each scenario's runs in a child process of their own, as `twice run`
  // runs its cells: a handler that crashes, calls exit() or hangs then fails
  // the check ("exited: 0", "hung: no scheduling point for 30 s"), naming the
  // run, its seed and its replay command, instead of ending your test program
  // (an exit(0) would end it green) or stalling it. A check that finds a
  // violation also re-runs its seed in a fresh process, and says so when the
  // handler keeps state across runs. false runs everything in this process,
  // for a debugger's breakpoints in your handler. Runs on a server engine are
  // never contained (a child would share this process's connections), nor
  // are checks made while this program runs other threads (a fork copies
  // their locks but not them); Report::contained says which it was, and the
  // message's first line ends "; not contained: ..." saying why. While a
  // check runs in this process, an exit() ends the program with status 1
  // (and a line on stderr), never with the status given: it cannot end green.
  bool contain = true;
  // Contained: seconds a scenario's process may go without reaching a
  // scheduling point (an Env call) before it is killed as hung; a hung run's
  // replay command carries it (--cell-timeout) when it is not 30.
  int hang_seconds = 30;
  // The plugin holding the handler, for the printed replay commands
  // ("twice replay --plugin <plugin> --handler ..."): `twice` itself can only
  // replay a handler it can load. Empty: the commands say where it goes. A
  // relative path that names a file from the test's working folder is printed
  // absolute, so that the commands work pasted in any folder.
  std::string plugin;
  // Where the bundled scenarios are.
  std::string bundled_dir = TWICE_BUNDLED_SCENARIOS_DIR;
  // The database every run uses: "sqlite" (the default), "postgres" or
  // "mariadb", at `isolation` ("read-committed", "repeatable-read",
  // "serializable"; empty: the engine's own default, read committed on
  // PostgreSQL, repeatable read on MariaDB). The handler's Schema must have
  // that engine's setup SQL. A throwaway server is started on the first such
  // check of the process and stopped at exit (docs/writing-a-handler.md, 11), or
  // `engine_url` names one (postgres://..., mysql://...). A field, not an
  // environment variable: which engine a test holds a handler to is part of
  // what the test asserts, so it is written in the test. Report::message
  // names the server a verdict came from, and never shows the URL's password.
  std::string engine = "sqlite";
  std::string isolation;
  std::string engine_url;
};

struct Report {
  bool passed = false;
  // Passed: one line. Failed: each violation with its counterexample, seed and
  // replay command; or what was wrong with the input.
  std::string message;
  // "concurrent-duplicates: double_credit", one per (scenario, invariant); on a
  // server engine the scenario carries it: "concurrent-duplicates@postgres/read-committed".
  std::vector<std::string> violations;
  int runs = 0;  // runs simulated, not counting shrinking
  // The runs were made in child processes (Options::contain), not in this one.
  bool contained = false;
  // Contained: processes the handler forked and left running (a daemon, a
  // child it never waited for), all killed when their scenario's runs ended;
  // `message` names the scenarios. Not a failure. Uncontained runs leave
  // them be, uncounted (0).
  int processes_left = 0;
};

// The handler registered under `handler` (TWICE_REGISTER_HANDLER) in this program.
Report check_exactly_once(std::string_view handler, const Options& options = {});
// Any handler, registered or not: HandlerInfo{"my-handler", "", [] { return std::make_unique<Mine>(); }}.
Report check_exactly_once(const HandlerInfo& handler, const Options& options = {});

// One run: a scenario (a bundled name or a .toml path) and a seed.
struct Run {
  std::string scenario;
  std::uint64_t seed = 0;
  // The scenario file's digest, as a printed replay command's
  // --scenario-digest gives it; when set, check_run() fails at once if the
  // file has changed since (the seed would run another run). Empty: unchecked.
  // (`= {}`: so that Run{"concurrent-duplicates", 7} leaves it out without
  // GCC's -Wmissing-field-initializers.)
  std::string scenario_digest = {};
};
inline std::ostream& operator<<(std::ostream& os, const Run& run) {
  return os << run.scenario << " seed " << run.seed;
}

// The scenarios `options` selects, in order, as Run::scenario values. A folder
// or file that cannot be read is listed as given: check_run() reports it.
std::vector<std::string> scenario_refs(const Options& options = {});
// Runs `run` once (Options::seeds and ::seed are not used) and, on a
// violation, shrinks it to a counterexample as check_exactly_once() does.
Report check_run(std::string_view handler, const Run& run, const Options& options = {});
Report check_run(const HandlerInfo& handler, const Run& run, const Options& options = {});

}  // namespace twice::testing
