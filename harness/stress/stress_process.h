// run_stress_contained(): run_stress() in a child process of its own, so that
// a handler that crashes, calls exit() or never returns takes down that run,
// never `twice stress`: the parent says what happened, removes the run's
// SQLite folder itself and keeps the reports it already has. The child sends
// its StressReport back over a pipe (CBOR, as explore/cell_process.cpp sends
// a cell's result). The child is contained as a `twice run` cell's process is
// (explore/contained_process.h): its own process group, stdin /dev/null, its
// stdout twice's stderr, dead with the parent; every process the handler
// forked and left (a daemon) is killed when the run ends, however it ends,
// and counted (ContainedRun::processes_left).
//
// What lives where: the parent makes the SQLite folder (the child's database
// goes in it) or leases the server database, and forks; the child seeds,
// starts the workers, judges and reports. A leased server database is closed
// afterwards and never lent again (its connections were the child's).
//
// Stopping: a terminal's Ctrl-C does not reach the child (its process group
// is its own), which ignores SIGINT, SIGTERM and SIGHUP besides; the parent
// decides. When `options.stop`
// turns true the child is told (memory shared with it) and ends after its
// round, with its report; when `kill_now` turns true, or the child is still
// running `grace` after the stop, it is killed and its report is lost.
//
// Threads: call from one thread, in a process that has started no other
// thread (a fork copies only the caller's, and the child runs the handler).
#pragma once

#include <atomic>
#include <string>

#include "stress/stress_runner.h"
#include "twice/status.h"

namespace twice::stress {

struct ContainedRun {
  enum class Outcome {
    kReport,         // `report` holds the run's report
    kError,          // the run could not be made or ended on an error: `status` says why
    kHandlerFailed,  // the child crashed or exited without a report: `status` says how
    kKilled,         // killed on kill_now or after the grace: no report
  };
  Outcome outcome = Outcome::kError;
  Status status;
  // Processes the handler forked and left running (a daemon), killed when the
  // run ended; with a report, also StressReport::processes_left.
  int processes_left = 0;
};

ContainedRun run_stress_contained(const StressOptions& options, const std::atomic<bool>* kill_now, Micros grace,
                                  StressReport& report);

// The wire format of a StressReport between the child and its parent. The
// verdict carries its violations and the accounts' names; decode returns
// false on a malformed message.
std::string encode_report(const StressReport& report);
bool decode_report(std::string_view bytes, StressReport& report);

}  // namespace twice::stress
