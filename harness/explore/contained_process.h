// Contained processes: the child that runs a `twice run` cell
// (explore/cell_process.h), a `twice replay` run or a `twice stress` run
// (stress/stress_process.h), and what its parent does so that nothing of it
// outlives twice. A handler under test may crash, exit,
// hang, fork, print or change its signal handling; the child takes all that,
// and the parent names what happened.
//
// A contained child:
// - is in a process group of its own. A terminal's Ctrl-C reaches twice
//   alone, which decides what stops; and every process a handler forked is in
//   the group, which the parent kills when the child ends (reap_contained()).
// - is a child subreaper (PR_SET_CHILD_SUBREAPER): a process a handler forked
//   that leaves the group (setsid(), a daemon's double fork) is still its
//   descendant, orphans included, and end_descendants() ends them all before
//   the child exits. A child that dies first (a crash, a kill) hands them to
//   its parent, which adopts them while its children run (OrphanAdoption) and
//   ends them when it reaps the child. Only twice killed by SIGKILL leaves
//   them to init.
// - dies with its parent (PR_SET_PDEATHSIG SIGKILL), whatever kills twice.
// - has every signal twice catches back at its default: a SIGTERM aimed at it
//   ends it, and it never prints twice's own "stopping" messages.
// - reads stdin from /dev/null, and its stdout is twice's stderr: what a
//   handler prints never mixes with the report, the JSON or the trace that
//   twice writes on stdout (twice_stdout() is the original, for twice's own
//   lines in the child).
//
// Threads: fork_contained() and reap_contained() from one thread of a parent
// that starts no other (see cell_process.cpp); kill_contained_now() and
// stop_contained_now() from a signal handler.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace twice::explore {

// Forks a contained child. Returns 0 in the child, set up as above; in the
// parent its pid, noted for stop_contained_now(). Throws std::runtime_error
// when the fork fails.
pid_t fork_contained();

// In a contained child: the file descriptor of twice's own stdout.
int twice_stdout();

// In a contained child, before it exits: kills and reaps every process it
// forked that is still there, however far down and whatever its session.
// Returns how many were still running (the handler left them behind).
int end_descendants();

// While one lives, this process (the parent of contained children) is a child
// subreaper: what a contained child that died leaves becomes its child, not
// init's, and reap_contained() and stop_contained_now() end it. Children this
// process had before are its own and never ended; so must any it forks while
// one lives, other than by fork_contained() (none does: the parent of cells
// only forks them). Construct before the first fork_contained(). Threads:
// the thread that forks.
class OrphanAdoption {
 public:
  OrphanAdoption();
  ~OrphanAdoption();  // ends any orphan left, and stops adopting
  OrphanAdoption(const OrphanAdoption&) = delete;
  OrphanAdoption& operator=(const OrphanAdoption&) = delete;

 private:
  bool mine_ = false;
  bool was_subreaper_ = false;
};

// In the parent, once the child `pid` has exited and before it is reaped
// (waitid WNOWAIT: its pid still names its process group): kills whatever is
// left in its group; unless it `ended_normally` (its work done, its files and
// descendants removed by itself), also what it left that this process adopted
// and its run databases; and reaps it. Returns its wait status;
// `processes_left`, when given, is how many adopted processes were still
// running. They are counted for this child: one that died at the same moment
// may have added its own.
int reap_contained(pid_t pid, bool ended_normally, int* processes_left = nullptr);

// Kills a contained child and its group now (hung, or its parent is giving up).
void kill_contained(pid_t pid);

// For a signal handler of a stop that still writes what is finished (a
// second Ctrl-C): kills every contained child and its group, and returns.
// Their parent reaps them as it would any child (reap_contained() removes
// their run databases, and ends what they left that this process adopted)
// and counts their work unfinished. Async-signal-safe.
void kill_contained_now();

// For a signal handler about to end twice at once (a third Ctrl-C): kills
// every contained child and its group, waits for them, ends what they left
// that this process adopted, and removes their run databases and this
// process's own. Async-signal-safe.
void stop_contained_now();

// `twice replay`'s run, contained: `body` runs in a contained child and
// returns the exit status for twice. A child that dies by a signal, exits
// before `body` returned, or reaches no scheduling point for
// `timeout_seconds` (it is then killed) is a failure, named as a cell's
// would be; its run databases are removed.
struct ContainedEnd {
  bool finished = false;  // `body` returned `status`
  int status = 0;
  std::string verdict;  // otherwise: "crashed: SIGSEGV", "exited: 0", "hung: no scheduling point for 30 s"
  std::string detail;   // what happened, in a sentence
  int processes_left = 0;  // processes the handler left running, killed when the run ended
};
ContainedEnd run_contained(int timeout_seconds, const std::function<int()>& body);

// The words for a hung child, shared by cells and replays: "hung: no
// scheduling point for 30 s", and what that means.
std::string hung_verdict(int timeout_seconds);
std::string hung_what(int timeout_seconds);  // "reached no scheduling point (...) for 30 s and was killed"

}  // namespace twice::explore
