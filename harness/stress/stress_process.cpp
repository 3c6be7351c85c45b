#include "stress/stress_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "explore/contained_process.h"
#include "process/child_io.h"
#include "stress/stress_database.h"
#include "stress/temp_folder.h"

namespace twice::stress {
namespace {

using process::signal_name;
using process::write_all;

namespace fs = std::filesystem;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// A child's one message: a kind byte, then the payload to the end of the pipe.
enum class Message : char {
  kReport = 'R',  // the StressReport, CBOR
  kError = 'E',   // run_stress() failed (or threw): [processes it left, the text], CBOR
  kExit = 'X',    // something called exit() (no payload)
};

int g_child_fd = -1;  // the child's end of its pipe; only ever set in a child

// A kError frame's payload: the processes the handler left (the report's
// count, which the error does not otherwise carry) and why the run failed.
std::string encode_error(int processes_left, const std::string& why) {
  const std::vector<std::uint8_t> bytes = json::to_cbor(json::array({processes_left, why}));
  return std::string(bytes.begin(), bytes.end());
}
bool decode_error(std::string_view bytes, int& processes_left, std::string& why) {
  try {
    const json j = json::from_cbor(bytes);
    processes_left = j.at(0).get<int>();
    why = j.at(1).get<std::string>();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}



// The stop flag the parent sets and the child's workers read: memory shared
// across the fork, one page.
class SharedFlag {
 public:
  SharedFlag() {
    void* p = ::mmap(nullptr, sizeof(std::atomic<bool>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) flag_ = new (p) std::atomic<bool>(false);
  }
  ~SharedFlag() {
    if (flag_) ::munmap(flag_, sizeof(std::atomic<bool>));
  }
  SharedFlag(const SharedFlag&) = delete;
  SharedFlag& operator=(const SharedFlag&) = delete;
  std::atomic<bool>* get() const { return flag_; }

 private:
  std::atomic<bool>* flag_ = nullptr;
};


// Registered in the child, so it runs first when a handler calls exit():
// the parent hears of it, and the child ends before the static destructors
// run under the workers' feet (which crashed it, reading as SIGSEGV).
extern "C" void on_child_exit() {
  static const char frame[1] = {static_cast<char>(Message::kExit)};
  write_all(g_child_fd, frame, sizeof frame);
  ::_exit(124);
}

// In a child made by explore::fork_contained(): its own process group, a
// child subreaper, stdin /dev/null, stdout twice's stderr.
[[noreturn]] void child_main(int fd, StressOptions options) {
  g_child_fd = fd;
  std::atexit(on_child_exit);
  // Signals are the parent's to act on; the child learns of a stop through options.stop.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  StressReport report;
  std::string error;  // empty: `report` is the run's
  try {
    if (const Status s = run_stress(options, report); !s.ok()) error = s.message();
  } catch (const std::exception& e) {
    error = fmt::format("the stress run threw: {}", e.what());
  } catch (...) {
    error = "the stress run threw something not a std::exception";
  }
  // What the handler forked and left (a daemon), ended before the report
  // goes, so that the report can say how many; the workers have all returned.
  report.processes_left = explore::end_descendants();
  const std::string frame = error.empty() ? static_cast<char>(Message::kReport) + encode_report(report)
                                          : static_cast<char>(Message::kError) + encode_error(report.processes_left, error);
  const bool sent = write_all(fd, frame.data(), frame.size());
  // No atexit handlers, no static destructors: they belong to the parent
  // (its servers, its clusters). What the handler printed goes out.
  std::cout.flush();
  std::fflush(nullptr);
  ::_exit(sent ? 0 : 125);
}

// What became of a stress run's child, from what it sent (`inbox`) and its
// wait status; `report` is filled when it sent one.
ContainedRun outcome_of(bool killed, int status, const std::string& inbox, StressReport& report) {
  using Outcome = ContainedRun::Outcome;
  if (killed) return {Outcome::kKilled, Status::error("killed before it ended; its report is lost")};
  const bool exited_zero = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (exited_zero && !inbox.empty() && inbox[0] == static_cast<char>(Message::kError)) {
    int left = 0;
    std::string why;
    if (!decode_error(std::string_view(inbox).substr(1), left, why))
      return {Outcome::kHandlerFailed, Status::error("the stress run sent back an error that does not decode (did the "
                                                     "handler write to file descriptors it does not own?)")};
    return {Outcome::kError, Status::error(why), left};
  }
  if (exited_zero && !inbox.empty() && inbox[0] == static_cast<char>(Message::kReport)) {
    if (decode_report(std::string_view(inbox).substr(1), report)) return {Outcome::kReport, Status::OK()};
    return {Outcome::kHandlerFailed,
            Status::error("the stress run sent back a report that does not decode (did the handler write to file "
                          "descriptors it does not own?)")};
  }
  if (!inbox.empty() && inbox[0] == static_cast<char>(Message::kExit))
    return {Outcome::kHandlerFailed, Status::error("the handler called exit() during the stress run; no report")};
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return {Outcome::kHandlerFailed,
            Status::error(fmt::format("the handler crashed during the stress run ({}: {}); no report",
                                      signal_name(sig), ::strsignal(sig)))};
  }
  return {Outcome::kHandlerFailed,
          Status::error(fmt::format("the handler exited (status {}) during the stress run; no report (does it call "
                                    "exit()?)",
                                    WIFEXITED(status) ? WEXITSTATUS(status) : -1))};
}

}  // namespace

std::string encode_report(const StressReport& r) {
  json violations = json::array();
  for (const auto& v : r.verdict.violations) violations.push_back(json::array({v.invariant, v.subject, v.detail}));
  json accounts = json::array();
  for (const auto& a : r.verdict.accounts) accounts.push_back(a.user);
  const json j = json::array({r.handler, r.database, r.threads, r.duplicates, r.orders_planned, r.orders_run,
                              r.deliveries, r.acked, r.redeliveries, r.elapsed, r.seeding, r.stopped_by, violations,
                              accounts, r.violations_per_invariant, r.violating_orders, r.processes_left});
  const std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

bool decode_report(std::string_view bytes, StressReport& r) {
  try {
    const json j = json::from_cbor(bytes);
    r = StressReport{};
    r.handler = j.at(0).get<std::string>();
    r.database = j.at(1).get<std::string>();
    r.threads = j.at(2).get<int>();
    r.duplicates = j.at(3).get<int>();
    r.orders_planned = j.at(4).get<long>();
    r.orders_run = j.at(5).get<long>();
    r.deliveries = j.at(6).get<long>();
    r.acked = j.at(7).get<long>();
    r.redeliveries = j.at(8).get<long>();
    r.elapsed = j.at(9).get<Micros>();
    r.seeding = j.at(10).get<Micros>();
    r.stopped_by = j.at(11).get<std::string>();
    for (const auto& v : j.at(12)) {
      check::Violation violation;
      violation.invariant = v.at(0).get<std::string>();
      violation.subject = v.at(1).get<std::string>();
      violation.detail = v.at(2).get<std::string>();
      r.verdict.violations.push_back(std::move(violation));
    }
    for (const auto& a : j.at(13)) r.verdict.accounts.push_back(check::AccountState{a.get<std::string>()});
    r.violations_per_invariant = j.at(14).get<std::map<std::string, int>>();
    r.violating_orders = j.at(15).get<long>();
    r.processes_left = j.at(16).get<int>();
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

ContainedRun run_stress_contained(const StressOptions& options, const std::atomic<bool>* kill_now, Micros grace,
                                  StressReport& report) {
  using Outcome = ContainedRun::Outcome;
  if (!options.handler) return {Outcome::kError, Status::error("no handler")};
  SharedFlag stop;
  if (!stop.get()) return {Outcome::kError, Status::error(fmt::format("mmap: {}", std::strerror(errno)))};

  StressOptions child_options = options;
  child_options.stop = stop.get();
  // Where the database lives is the parent's, so that it outlives a child
  // that dies: the SQLite folder, or the leased server database.
  TempFolder folder;  // the parent's: removed however the child ended
  std::unique_ptr<StressDatabase> server_database;
  if (options.engine.is_sqlite()) {
    if (Status s = folder.create(options.temp_parent); !s.ok()) return {Outcome::kError, s};
    child_options.temp_parent = folder.path();
  } else if (!options.database) {
    if (Status s = open_stress_database(options.engine, options.busy_timeout, options.temp_parent, server_database);
        !s.ok())
      return {Outcome::kError, s};
    child_options.database = server_database.get();
  }

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {Outcome::kError, Status::error(fmt::format("pipe: {}", std::strerror(errno)))};
  // What a child that dies (a crash, a kill) leaves becomes this process's
  // to end, as a `twice run` cell's does (explore/contained_process.h).
  const explore::OrphanAdoption adoption;
  pid_t pid = -1;
  try {
    pid = explore::fork_contained();
  } catch (const std::runtime_error& e) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {Outcome::kError, Status::error(e.what())};  // "cannot fork a contained process: ..."
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], std::move(child_options));
  }
  ::close(fds[1]);
  if (server_database) server_database->discard();  // the child's connections now

  std::string inbox;
  bool killed = false;
  std::optional<SteadyClock::time_point> stop_seen;
  bool pipe_open = true;
  int status = 0;
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  auto drain = [&] {
    char buffer[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
      if (n > 0) {
        inbox.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || errno != EAGAIN) pipe_open = false;
      return;
    }
  };
  siginfo_t exited{};
  for (;;) {
    if (!killed && options.stop && options.stop->load()) {
      if (!stop_seen) {
        stop_seen = SteadyClock::now();
        stop.get()->store(true);
      }
      const bool grace_over = SteadyClock::now() - *stop_seen > std::chrono::microseconds(grace);
      if ((kill_now && kill_now->load()) || grace_over) {
        explore::kill_contained(pid);
        killed = true;
      }
    }
    // A signal cuts the wait short; a stop is then seen at once.
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, pipe_open ? 1 : 0, 50) > 0) drain();
    // The child's exit ends the wait, also while a process the handler
    // started keeps the pipe open. Seen without reaping it (WNOWAIT): its
    // pid still names its process group for reap_contained().
    const int r = ::waitid(P_PID, static_cast<id_t>(pid), &exited, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && exited.si_pid == pid) {
      if (pipe_open) drain();
      break;
    }
    if (r != 0 && errno != EINTR) break;
  }
  // A child that sent its report and exited 0 ended what its handler left,
  // and counted it; after any other end, what it left that this process
  // adopted is ended here, and counted.
  const bool reported = !killed && !inbox.empty() && inbox[0] == static_cast<char>(Message::kReport) &&
                        exited.si_code == CLD_EXITED && exited.si_status == 0;
  int orphans = 0;
  status = explore::reap_contained(pid, reported, &orphans);
  ::close(fds[0]);

  ContainedRun run = outcome_of(killed, status, inbox, report);
  // A child that reported ended its own (counted in the report, or in its
  // error); this process adopted none of them then.
  if (run.outcome == Outcome::kReport) run.processes_left = report.processes_left;
  else run.processes_left += orphans;
  return run;
}

}  // namespace twice::stress
