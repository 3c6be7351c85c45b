#include "explore/cell_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <new>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "env/journal_vfs.h"
#include "env/run_database.h"
#include "env/sqlite_db.h"
#include "explore/contained_process.h"
#include "gateway/signature.h"
#include "process/child_io.h"
#include "run/simulate.h"
#include "sim/heartbeat.h"

// Why fork, and why from a parent with no threads: the parent of the cells
// only forks, reads pipes and waits, all from the calling thread; it never
// runs a handler and starts no thread (the -j cells run at once as -j child
// processes, not as threads). So every fork() copies a single-threaded
// process, and the child may do anything (allocate, open SQLite, run the
// cell) without the async-signal-safe restriction that a fork from a
// multi-threaded process would put on it, and without re-executing `twice`
// (which would load the scenarios, the expected matrix and every --plugin
// again, per cell). A --plugin's handlers were registered in the parent
// before the first fork, so the children have them, contained the same way.

namespace twice::explore {
namespace {

using process::signal_name;
using process::write_all;

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// --- the wire format ---------------------------------------------------------

json to_wire(const CellFailure& f) {
  return json::array({f.verdict, f.detail, f.phase, f.run, f.seed, f.replay_command});
}

void from_wire(const json& j, CellFailure& f) {
  f.verdict = j.at(0).get<std::string>();
  f.detail = j.at(1).get<std::string>();
  f.phase = j.at(2).get<std::string>();
  f.run = j.at(3).get<int>();
  f.seed = j.at(4).get<std::uint64_t>();
  f.replay_command = j.at(5).get<std::string>();
}

json to_wire(const Counterexample& c) {
  json rows = json::array();
  for (const auto& r : c.rows)
    rows.push_back(json::array({r.column, r.time, r.kind, r.text, r.result, r.step, r.skipped}));
  json effects = json::array();
  for (const auto& e : c.effects) effects.push_back(json::array({e.order_no, e.service, e.effect, e.applied, e.required}));
  return json::array({c.seed, c.choices, c.steps, c.hidden_steps, c.columns, rows, c.gateway, c.balances,
                      c.replay_command, c.replay_shrunk_command, c.subject, c.detail, effects, c.preemptions,
                      c.found_at_bound, c.shrunk});
}

void from_wire(const json& j, Counterexample& c) {
  c.seed = j.at(0).get<std::uint64_t>();
  c.choices = j.at(1).get<std::vector<std::uint64_t>>();
  c.steps = j.at(2).get<int>();
  c.hidden_steps = j.at(3).get<int>();
  c.columns = j.at(4).get<std::vector<std::string>>();
  for (const auto& r : j.at(5)) {
    TranscriptRow row;
    row.column = r.at(0).get<int>();
    row.time = r.at(1).get<std::string>();
    row.kind = r.at(2).get<std::string>();
    row.text = r.at(3).get<std::string>();
    row.result = r.at(4).get<std::string>();
    row.step = r.at(5).get<bool>();
    row.skipped = r.at(6).get<int>();
    c.rows.push_back(std::move(row));
  }
  c.gateway = j.at(6).get<std::vector<std::string>>();
  c.balances = j.at(7).get<std::vector<std::string>>();
  c.replay_command = j.at(8).get<std::string>();
  c.replay_shrunk_command = j.at(9).get<std::string>();
  c.subject = j.at(10).get<std::string>();
  c.detail = j.at(11).get<std::string>();
  for (const auto& e : j.at(12))
    c.effects.push_back(EffectRecord{e.at(0).get<std::string>(), e.at(1).get<std::string>(), e.at(2).get<std::string>(),
                                     e.at(3).get<std::vector<std::string>>(), e.at(4).get<bool>()});
  c.preemptions = j.at(13).get<int>();
  c.found_at_bound = j.at(14).get<int>();
  c.shrunk = j.at(15).get<bool>();
}

json to_wire(const std::optional<ExhaustiveVerdict>& e) {
  if (!e) return nullptr;
  return json::array({e->schedules, e->runs, e->reduction, e->preemption_bound, e->max_faults, e->complete,
                      e->estimated_schedules, e->interrupted});
}

void from_wire(const json& j, std::optional<ExhaustiveVerdict>& e) {
  if (j.is_null()) return;
  e.emplace();
  e->schedules = j.at(0).get<long>();
  e->runs = j.at(1).get<long>();
  e->reduction = j.at(2).get<std::string>();
  e->preemption_bound = j.at(3).get<int>();
  e->max_faults = j.at(4).get<int>();
  e->complete = j.at(5).get<bool>();
  e->estimated_schedules = j.at(6).get<double>();
  e->interrupted = j.at(7).get<bool>();
}

json to_wire(const CellResult& c) {
  json violations = json::array();
  for (const auto& v : c.violations)
    violations.push_back(json::array(
        {v.invariant, v.subject, v.detail, v.failures, v.schedules_to_first, v.seed, to_wire(v.counterexample)}));
  json failures = json::array();
  for (const auto& f : c.failures) failures.push_back(to_wire(f));
  return json::array({c.handler, c.scenario, c.strategy, c.seeds_run, c.failing_runs, c.failing_run_indices,
                      c.max_tasks, c.max_steps, violations, c.expected, c.expected_reason, c.expectation_listed,
                      c.matched, failures, c.seconds, to_wire(c.exhaustive), c.distinct_schedules,
                      c.proof_required ? json::array({c.proof_required->preemption_bound, c.proof_required->max_faults})
                                       : json(nullptr),
                      c.processes_left, c.cut_short});
}

void from_wire(const json& j, CellResult& c) {
  c.handler = j.at(0).get<std::string>();
  c.scenario = j.at(1).get<std::string>();
  c.strategy = j.at(2).get<std::string>();
  c.seeds_run = j.at(3).get<int>();
  c.failing_runs = j.at(4).get<int>();
  c.failing_run_indices = j.at(5).get<std::vector<int>>();
  c.max_tasks = j.at(6).get<int>();
  c.max_steps = j.at(7).get<int>();
  for (const auto& v : j.at(8)) {
    ViolationResult vr;
    vr.invariant = v.at(0).get<std::string>();
    vr.subject = v.at(1).get<std::string>();
    vr.detail = v.at(2).get<std::string>();
    vr.failures = v.at(3).get<int>();
    vr.schedules_to_first = v.at(4).get<int>();
    vr.seed = v.at(5).get<std::uint64_t>();
    from_wire(v.at(6), vr.counterexample);
    c.violations.push_back(std::move(vr));
  }
  c.expected = j.at(9).get<std::vector<std::string>>();
  c.expected_reason = j.at(10).get<std::string>();
  c.expectation_listed = j.at(11).get<bool>();
  c.matched = j.at(12).get<bool>();
  for (const auto& f : j.at(13)) {
    CellFailure failure;
    from_wire(f, failure);
    c.failures.push_back(std::move(failure));
  }
  c.seconds = j.at(14).get<double>();
  from_wire(j.at(15), c.exhaustive);
  c.distinct_schedules = j.at(16).get<int>();
  if (!j.at(17).is_null())
    c.proof_required = results::ProofRequirement{j.at(17).at(0).get<int>(), j.at(17).at(1).get<int>()};
  c.processes_left = j.at(18).get<int>();
  c.cut_short = j.at(19).get<bool>();
}

std::string cbor(const json& j) {
  const std::vector<std::uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

// A child's messages: a kind byte, a 4-byte little-endian length, the payload.
enum class Message : char {
  kCell = 'R',          // the CellResult
  kObserved = 'I',      // a re-check's invariants
  kError = 'E',         // the harness threw: the text
  kOutOfMemory = 'M',   // an allocation failed under the memory limit (no payload)
};
constexpr std::size_t kHeader = 5;

// --- the child's side ----------------------------------------------------------

int g_child_fd = -1;  // the child's end of its pipe; only ever set in a child
struct stat g_child_pipe {};  // what g_child_fd was when the child started
// Set (in memory its parent reads) when the child could not send its result.
std::atomic<bool>* g_unsent = nullptr;

void send(Message kind, const std::string& payload) {
  const auto size = static_cast<std::uint32_t>(payload.size());
  std::string frame(kHeader, '\0');
  frame[0] = static_cast<char>(kind);
  for (int b = 0; b < 4; ++b) frame[1 + b] = static_cast<char>((size >> (8 * b)) & 0xff);
  frame += payload;
  // A handler that closed the pipe may have had its number reused by a file
  // of its own: the result would go there, and the parent would see none.
  struct stat now {};
  const bool still_the_pipe = ::fstat(g_child_fd, &now) == 0 && now.st_dev == g_child_pipe.st_dev &&
                              now.st_ino == g_child_pipe.st_ino;
  if (!still_the_pipe || !write_all(g_child_fd, frame.data(), frame.size())) {
    if (g_unsent) g_unsent->store(true);
    ::_exit(125);
  }
}

// operator new failed under the memory limit: nothing may allocate any more,
// so a frame built in advance says so and the child ends.
void send_out_of_memory() {
  static const char frame[kHeader] = {static_cast<char>(Message::kOutOfMemory), 0, 0, 0, 0};
  write_all(g_child_fd, frame, sizeof frame);
}

void on_out_of_memory() {
  send_out_of_memory();
  ::_exit(124);
}

// In a child made by fork_contained() (explore/contained_process.h: its own
// process group, killed with its parent, twice's signal handlers reset).
template <class Body>
[[noreturn]] void child_main(int fd, std::atomic<std::uint64_t>* beat, std::atomic<bool>* unsent,
                             const IsolationLimits& limits, Body body) {
  g_child_fd = fd;
  ::fstat(fd, &g_child_pipe);
  g_unsent = unsent;
  sim::heartbeat = beat;
  if (limits.memory_limit_bytes > 0) {
    const rlimit limit{limits.memory_limit_bytes, limits.memory_limit_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
    std::set_new_handler(on_out_of_memory);
  }
  int code = 0;
  bool returned = false;
  try {
    body();
    returned = true;
  } catch (const std::bad_alloc& e) {
    // Under the memory limit, what operator new's handler does not see: a
    // fiber's stack that mmap could not map. The cell is out of memory, not
    // "error: std::bad_alloc".
    if (limits.memory_limit_bytes > 0) {
      send_out_of_memory();
    } else {
      send(Message::kError, e.what());
    }
  } catch (const std::exception& e) {
    send(Message::kError, e.what());
  } catch (...) {
    send(Message::kError, "an exception that is not a std::exception");
    code = 1;
  }
  // Whatever the handler forked and left, so that nothing outlives the cell
  // (a body that returned ended them itself, to count them in its result).
  if (!returned) end_descendants();
  // The runs' database file kept for this thread (env/run_database.h) is the
  // child's own: removed here, since _exit() runs no thread_local destructor.
  env::RunDatabase::of_this_thread().remove_before_exit();
  // What the handler printed goes out (to twice's stderr); nothing of the
  // parent's is left to flush twice (it flushed before forking). No atexit handlers, no static
  // destructors: they belong to the parent.
  std::cout.flush();
  std::fflush(nullptr);
  ::_exit(code);
}

// --- the run under way, in memory the parent can read ------------------------

// Each running child has a slot of memory shared with the parent (mapped
// before the fork): the heartbeat (sim/heartbeat.h) and the run it started
// last. The parent reads the run only once the child has exited, to name it
// in a failure; sending it down the pipe instead cost a write in the child
// and a wake-up, a read and a decode in the parent for every run (38,000 in
// the main job), on cores the cells need.
struct RunRecord {
  int run = 0;
  std::uint64_t seed = 0;
  char phase[112] = {};  // "exploring", "shrinking <invariant>"; cut to fit
};
struct Slot {
  std::atomic<std::uint64_t> beat;
  // Which of `records` is the latest. A child writes the other one and then
  // publishes it, so a child killed while writing leaves the last one whole.
  std::atomic<std::uint32_t> latest;
  RunRecord records[2];
  std::atomic<bool> unsent;  // the child could not send its result (send())
  // Set by the parent on Ctrl-C: an exhaustive search under way ends early and
  // reports itself interrupted (a search can take hours; a random cell's
  // seeds are bounded, and finish).
  std::atomic<bool> stop;
};

void record_run(Slot& slot, std::string_view phase, int run, std::uint64_t seed) {
  const std::uint32_t next = slot.latest.load(std::memory_order_relaxed) ^ 1u;
  RunRecord& r = slot.records[next];
  r.run = run;
  r.seed = seed;
  const std::size_t n = std::min(phase.size(), sizeof r.phase - 1);
  std::memcpy(r.phase, phase.data(), n);
  r.phase[n] = '\0';
  slot.latest.store(next, std::memory_order_release);
  slot.beat.fetch_add(1, std::memory_order_relaxed);  // starting a run is a sign of life
}

// --- the parent's side ---------------------------------------------------------

struct Work {
  enum class Kind { kExplore, kRecheck } kind = Kind::kExplore;
  std::size_t cell = 0;
  std::size_t violation = 0;  // kRecheck: which of the cell's violations
};

struct Child {
  Work work;
  pid_t pid = -1;
  int fd = -1;  // -1 once the child closed its end
  int pidfd = -1;  // readable once the child has exited; -1 where the kernel has none
  std::size_t slot = 0;
  std::string inbox;
  std::uint64_t last_beat = 0;
  Clock::time_point last_sign_of_life;
  Clock::time_point started;
  CellFailure under_way;
  bool killed_as_hung = false;
  bool killed_by_stop = false;  // by the parent, at a stop now (the signal handler may have been first)
  bool out_of_memory = false;
  std::optional<CellResult> cell;
  std::optional<std::vector<std::string>> observed;
  std::optional<std::string> error;
  bool garbled = false;  // a message that does not decode
  bool unsent = false;   // the child could not send its result
  int status = 0;        // as waitpid() reported it
  int processes_left = 0;  // what it left running, adopted and ended by the parent (reap_contained())
};


std::string describe_run(const CellFailure& f) {
  if (f.run == 0) return "before its first run";
  return fmt::format("while {} run {} (seed {})", f.phase, f.run, f.seed);
}

class CellSupervisor {
 public:
  CellSupervisor(const std::vector<const HandlerInfo*>& handlers, const std::vector<gateway::Scenario>& scenarios,
                 const ExploreOptions& options, const IsolationLimits& limits, const ExpectedMatrix& expected)
      : handlers_(handlers), scenarios_(scenarios), options_(options), limits_(limits), expected_(expected) {
    total_ = handlers.size() * scenarios.size();
    cells_.resize(total_);
    rechecks_left_.assign(total_, 0);
    for (std::size_t i = 0; i < total_; ++i) queue_.push_back(Work{Work::Kind::kExplore, i, 0});
    jobs_ = static_cast<std::size_t>(std::max(1, std::min<int>(options.jobs, static_cast<int>(std::max<std::size_t>(total_, 1)))));
    // One Slot per running child (a heartbeat and the run under way), on cache lines of its own.
    beats_size_ = jobs_ * kSlotBytes;
    void* shared = ::mmap(nullptr, beats_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) throw std::runtime_error(fmt::format("cannot map the cells' heartbeats: {}", std::strerror(errno)));
    beats_ = static_cast<char*>(shared);
    for (std::size_t s = 0; s < jobs_; ++s) free_slots_.push_back(jobs_ - 1 - s);
  }

  ~CellSupervisor() {
    // Only reached with children still running when something threw: take
    // them down, their files with them.
    for (auto& c : running_) {
      kill_contained(c.pid);
      reap_contained(c.pid, false);
      if (c.fd >= 0) ::close(c.fd);
      if (c.pidfd >= 0) ::close(c.pidfd);
    }
    ::munmap(beats_, beats_size_);
  }
  CellSupervisor(const CellSupervisor&) = delete;
  CellSupervisor& operator=(const CellSupervisor&) = delete;

  MatrixResult run() {
    for (;;) {
      while (running_.size() < jobs_ && start_next()) {
      }
      if (running_.empty()) break;
      if (options_.stop && options_.stop->load())
        for (const Child& c : running_) slot_at(c.slot).stop.store(true);
      // The signal handler kills the children at once; a child forked since
      // it ran is killed here.
      if (stopping_now())
        for (Child& c : running_)
          if (!c.killed_by_stop) {
            kill_contained(c.pid);
            c.killed_by_stop = true;
          }
      tell_progress();
      wait_for_children();
    }
    MatrixResult m;
    for (const auto* h : handlers_) m.handlers.push_back(h->name);
    for (const auto& s : scenarios_) m.scenarios.push_back(s.name);
    m.strategy = matrix_strategy_name(options_);
    m.seeds = options_.seeds;
    m.base_seed = options_.base_seed;
    for (std::size_t i = 0; i < total_; ++i)
      m.add(rechecks_left_[i] == 0 ? std::move(cells_[i]) : std::nullopt);  // a re-check cut short: not finished
    return m;
  }

 private:
  static constexpr std::size_t kSlotBytes = (sizeof(Slot) + 63) & ~std::size_t{63};  // whole cache lines

  const HandlerInfo& handler_of(std::size_t cell) const { return *handlers_[cell / scenarios_.size()]; }
  const gateway::Scenario& scenario_of(std::size_t cell) const { return scenarios_[cell % scenarios_.size()]; }
  Slot& slot_at(std::size_t slot) { return *reinterpret_cast<Slot*>(beats_ + slot * kSlotBytes); }
  std::atomic<std::uint64_t>* beat(std::size_t slot) { return &slot_at(slot).beat; }

  // ExploreOptions::on_progress, about once a second, for the cells exploring.
  void tell_progress() {
    if (!options_.on_progress) return;
    const auto now = Clock::now();
    if (now - last_progress_ < std::chrono::seconds(1)) return;
    last_progress_ = now;
    for (const Child& c : running_) {
      if (c.work.kind != Work::Kind::kExplore) continue;
      Slot& slot = slot_at(c.slot);
      const RunRecord& r = slot.records[slot.latest.load(std::memory_order_acquire)];
      const std::string phase(r.phase, ::strnlen(r.phase, sizeof r.phase));
      options_.on_progress(handler_of(c.work.cell).name, scenario_of(c.work.cell).name, phase, r.run,
                           std::chrono::duration<double>(now - c.started).count());
    }
  }

  bool stopping_now() const { return options_.stop_now && options_.stop_now->stopped(); }

  // Starts the next piece of work; false when there is none to start. After
  // Ctrl-C no new cell starts, but the re-checks of cells under way do; after
  // a second one, nothing does.
  bool start_next() {
    if (stopping_now()) return false;
    auto it = queue_.begin();
    if (options_.stop && options_.stop->load())
      it = std::find_if(queue_.begin(), queue_.end(), [](const Work& w) { return w.kind == Work::Kind::kRecheck; });
    if (it == queue_.end()) return false;
    const Work work = *it;
    queue_.erase(it);
    spawn(work);
    return true;
  }

  void spawn(const Work& work) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
    // A cell starts before its process exists: a stop now that comes between
    // counts it under way, and kills it (the loop in run() does, if the
    // signal handler's kill came before the fork).
    if (work.kind == Work::Kind::kExplore && options_.stop_now && !options_.stop_now->start()) {
      ::close(fds[0]);
      ::close(fds[1]);
      return;
    }
    const std::size_t slot = free_slots_.back();
    free_slots_.pop_back();
    new (&slot_at(slot)) Slot{};  // no beat, no run yet
    pid_t pid = -1;
    try {
      pid = fork_contained();
    } catch (...) {
      ::close(fds[0]);
      ::close(fds[1]);
      free_slots_.push_back(slot);
      throw;
    }
    if (pid == 0) {
      ::close(fds[0]);
      slot_of_child_ = slot;
      child_main(fds[1], beat(slot), &slot_at(slot).unsent, limits_, [&] { run_in_child(work); });
    }
    ::close(fds[1]);
    // Read until empty once the child has exited: a process the handler
    // forked may hold the pipe open, and no EOF is waited for.
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    Child c;
    c.work = work;
    c.pid = pid;
    c.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    c.fd = fds[0];
    c.slot = slot;
    c.last_sign_of_life = Clock::now();
    c.started = c.last_sign_of_life;
    if (work.kind == Work::Kind::kRecheck) {
      const ViolationResult& v = cells_[work.cell]->violations[work.violation];
      c.under_way = CellFailure{{}, {}, "re-checking " + v.invariant, v.schedules_to_first, v.seed, {}};
    }
    running_.push_back(std::move(c));
  }

  void run_in_child(const Work& work) {
    const HandlerInfo& h = handler_of(work.cell);
    const gateway::Scenario& s = scenario_of(work.cell);
    if (work.kind == Work::Kind::kExplore) {
      ExploreOptions o = options_;
      o.jobs = 1;
      o.on_cell = nullptr;
      o.stop_now = nullptr;  // the parent kills this process instead
      Slot& mine = slot_at(slot_of_child_);
      o.on_run = [&mine](std::string_view phase, int run, std::uint64_t seed) { record_run(mine, phase, run, seed); };
      o.stop = &mine.stop;
      CellResult cell = explore_cell(s, h, o, expected_.get(h.name, s.name));
      cell.processes_left = end_descendants();
      send(Message::kCell, cbor(to_wire(cell)));
      return;
    }
    // A counterexample's seed alone, in a process that ran nothing before,
    // under the strategy the cell ran (PCT's k measured for this cell, as
    // explore_cell measured it; unresolved, k would differ and so would the run).
    // An exhaustive search's counterexample has no seed: its schedule is re-run.
    const ViolationResult& v = cells_[work.cell]->violations[work.violation];
    const bool exhaustive = options_.strategy.kind == sim::StrategyKind::kExhaustive;
    const run::RunResult r = run_in_cell(run::RunSpec{&s, &h, resolve_strategy(options_.strategy, s, h), v.seed,
                                                      exhaustive ? std::optional(v.counterexample.choices) : std::nullopt,
                                                      false});
    end_descendants();  // not counted: the cell's own runs were
    json observed = json::array();
    for (const auto& v : r.verdict.violations) observed.push_back(v.invariant);
    send(Message::kObserved, cbor(observed));
  }

  void wait_for_children() {
    std::vector<pollfd> fds;
    std::vector<std::size_t> owner;
    for (std::size_t i = 0; i < running_.size(); ++i)
      if (running_[i].fd >= 0) {
        fds.push_back(pollfd{running_[i].fd, POLLIN, 0});
        owner.push_back(i);
      }
    // After the pipes: each child's pidfd, readable once the child has exited.
    // Its result is taken then, not at its pipe's EOF: a process the handler
    // forked may hold the pipe open as long as it lives.
    const std::size_t pipes = fds.size();
    std::vector<int> pidfd_at(running_.size(), -1);  // a child's entry in fds, -1: none
    int timeout_ms = 200;
    for (std::size_t i = 0; i < running_.size(); ++i) {
      if (running_[i].pidfd < 0) {  // its exit only waitid can tell: look again soon, sooner when it is ending
        timeout_ms = std::min(timeout_ms, running_[i].fd < 0 || running_[i].killed_as_hung ? 5 : 50);
        continue;
      }
      pidfd_at[i] = static_cast<int>(fds.size());
      fds.push_back(pollfd{running_[i].pidfd, POLLIN, 0});
    }
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    for (std::size_t k = 0; ready > 0 && k < pipes; ++k)
      if (fds[k].revents != 0) read_from(running_[owner[k]]);

    const auto now = Clock::now();
    for (auto& c : running_) {
      const std::uint64_t b = beat(c.slot)->load(std::memory_order_relaxed);
      if (b != c.last_beat) {
        c.last_beat = b;
        c.last_sign_of_life = now;
      }
      if (!c.killed_as_hung && now - c.last_sign_of_life > std::chrono::seconds(limits_.timeout_seconds)) {
        kill_contained(c.pid);
        c.killed_as_hung = true;
      }
    }
    std::vector<bool> may_have_exited(running_.size());
    for (std::size_t i = 0; i < running_.size(); ++i)
      may_have_exited[i] = pidfd_at[i] < 0 || (ready > 0 && fds[static_cast<std::size_t>(pidfd_at[i])].revents != 0);
    std::vector<Child> done;
    for (std::size_t i = 0, k = 0; i < running_.size(); ++k) {
      if (may_have_exited[k] && reap(running_[i])) {
        if (running_[i].fd >= 0) ::close(running_[i].fd);
        if (running_[i].pidfd >= 0) ::close(running_[i].pidfd);
        free_slots_.push_back(running_[i].slot);
        done.push_back(std::move(running_[i]));
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    for (auto& c : done) finish(c);
  }

  // One read of the child's pipe; false when nothing more is there now (empty, or closed).
  bool read_from(Child& c) {
    char buffer[1 << 16];
    const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return true;
    if (n < 0 && errno == EAGAIN) return false;
    if (n <= 0) {
      ::close(c.fd);
      c.fd = -1;
      return false;
    }
    c.inbox.append(buffer, static_cast<std::size_t>(n));
    c.last_sign_of_life = Clock::now();
    for (;;) {
      if (c.inbox.size() < kHeader) return true;
      std::uint32_t size = 0;
      for (int b = 0; b < 4; ++b) size |= static_cast<std::uint32_t>(static_cast<unsigned char>(c.inbox[1 + b])) << (8 * b);
      if (c.inbox.size() < kHeader + size) return true;
      const auto kind = static_cast<Message>(c.inbox[0]);
      const std::string payload = c.inbox.substr(kHeader, size);
      c.inbox.erase(0, kHeader + size);
      handle_message(c, kind, payload);
    }
  }

  void handle_message(Child& c, Message kind, const std::string& payload) {
    if (kind == Message::kOutOfMemory) {
      c.out_of_memory = true;
      return;
    }
    if (kind == Message::kError) {
      c.error = payload;
      return;
    }
    try {
      const json j = json::from_cbor(payload);
      if (kind == Message::kCell) {
        CellResult cell;
        from_wire(j, cell);
        c.cell = std::move(cell);
      } else if (kind == Message::kObserved) {
        c.observed = j.get<std::vector<std::string>>();
      } else {
        c.garbled = true;
      }
    } catch (const json::exception&) {
      c.garbled = true;
    }
  }

  // True once the child has exited and is reaped. Its files are removed, and
  // what it left running in its process group killed, before it is reaped,
  // while its pid cannot belong to anyone else.
  bool reap(Child& c) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) return false;
      throw std::runtime_error(fmt::format("waitid: {}", std::strerror(errno)));
    }
    if (info.si_pid == 0) return false;
    // Everything it sent is in its pipe now.
    while (c.fd >= 0 && read_from(c)) {
    }
    // Exited: its slot is still and still its own; the last run it started.
    const Slot& slot = slot_at(c.slot);
    const RunRecord& r = slot.records[slot.latest.load(std::memory_order_acquire)];
    if (c.work.kind == Work::Kind::kExplore && r.run > 0) c.under_way = CellFailure{{}, {}, r.phase, r.run, r.seed, {}};
    c.unsent = slot.unsent.load();
    const bool normal = (c.cell || c.observed) && info.si_code == CLD_EXITED && info.si_status == 0;
    c.status = reap_contained(c.pid, normal, &c.processes_left);
    c.pid = -1;
    return true;
  }

  // What a child that brought no result back means.
  CellFailure failure_of(const Child& c, const HandlerInfo& h, const gateway::Scenario& s) const {
    CellFailure f = c.under_way;
    const int status = c.status;
    std::string what;
    if (c.out_of_memory) {
      f.verdict = "out of memory";
      // `twice replay` has no such limit (a shell's `ulimit -v` would stop
      // twice itself from loading): its replay shows the run, not the failure.
      what = fmt::format("ran out of memory (its limit is {} MiB; the replay below runs without it)",
                         limits_.memory_limit_bytes >> 20);
    } else if (c.error) {
      f.verdict = fmt::format("error: {}", *c.error);
      what = fmt::format("stopped on an error ({})", *c.error);
    } else if (c.killed_as_hung) {
      f.verdict = hung_verdict(limits_.timeout_seconds);
      what = hung_what(limits_.timeout_seconds);
    } else if (c.unsent) {
      // After its runs, not during one: no run to name, nothing to replay.
      f = CellFailure{"error: result not sent",
                      "the process running this cell could not send its result back (did the handler close or "
                      "replace file descriptors it does not own?)",
                      {}, 0, 0, {}};
      return f;
    } else if (WIFSIGNALED(status)) {
      f.verdict = fmt::format("crashed: {}", signal_name(WTERMSIG(status)));
      what = fmt::format("died by {} ({})", signal_name(WTERMSIG(status)), ::strsignal(WTERMSIG(status)));
    } else if (c.garbled) {
      f.verdict = "error: garbled result";
      what = "sent back a result that does not decode (did the handler write to file descriptors it does not own?)";
    } else {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      f.verdict = fmt::format("exited: {}", code);
      what = fmt::format("exited with status {} without a result (the handler called exit()?)", code);
    }
    f.detail = fmt::format("the process running this cell {} {}", what, describe_run(f));
    if (f.run > 0) {
      const bool shrinking = f.phase.starts_with("shrinking");
      f.replay_command = replay_command(h.name, s, f.seed, options_.strategy, shrinking,
                                        options_.shrink ? options_.shrink_budget : 0);
      // A hung run's replay waits as long before calling it hung (`twice
      // replay`'s own patience is IsolationLimits's default).
      if (c.killed_as_hung && limits_.timeout_seconds != IsolationLimits{}.timeout_seconds)
        f.replay_command += fmt::format(" --cell-timeout {}", limits_.timeout_seconds);
    }
    return f;
  }

  // A child the user's interrupt ended while twice is stopping (a SIGINT or
  // SIGTERM sent to every process, a handler that put SIGINT back to its
  // default): its work was cut short, not failed.
  bool interrupted(const Child& c) const {
    if (!options_.stop || !options_.stop->load() || c.cell || c.observed || c.killed_as_hung) return false;
    return WIFSIGNALED(c.status) && (WTERMSIG(c.status) == SIGINT || WTERMSIG(c.status) == SIGTERM ||
                                     WTERMSIG(c.status) == SIGHUP);
  }

  // A child a stop now killed (a second Ctrl-C) before it sent its result:
  // its work is unfinished, neither a crash nor a verdict of its handler.
  bool stopped_now(const Child& c) const {
    if (!stopping_now() || c.cell || c.observed || c.error || c.killed_as_hung) return false;
    return WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL;
  }

  void finish(Child& c) {
    const std::size_t i = c.work.cell;
    const HandlerInfo& h = handler_of(i);
    const gateway::Scenario& s = scenario_of(i);
    // Its cell is not finished (nor one whose re-check this was): not reported.
    if (stopped_now(c)) return;
    if (c.work.kind == Work::Kind::kExplore && interrupted(c)) return;  // not run: the matrix is incomplete
    if (c.work.kind == Work::Kind::kExplore) {
      if (c.cell) {
        cells_[i] = std::move(*c.cell);
        cells_[i]->processes_left += c.processes_left;
        // Each counterexample is checked from fresh state before it is reported.
        for (std::size_t v = 0; v < cells_[i]->violations.size(); ++v) {
          queue_.push_front(Work{Work::Kind::kRecheck, i, v});
          ++rechecks_left_[i];
        }
      } else {
        cells_[i] = unfinished_cell(s, h, options_, expected_.get(h.name, s.name), failure_of(c, h, s));
        cells_[i]->processes_left = c.processes_left;
      }
    } else {
      const ViolationResult& v = cells_[i]->violations[c.work.violation];
      if (interrupted(c)) {
        // Not re-checked: the violation stands as found.
      } else if (c.observed) {
        if (std::find(c.observed->begin(), c.observed->end(), v.invariant) == c.observed->end()) {
          CellFailure f;
          if (v.schedules_to_first > 1) {
            f.verdict = kKeepsStateVerdict;
            f.detail = fmt::format(
                "run {} (seed {}) showed {} after {} earlier run{} in the same process, but not when run alone in a "
                "fresh one: the handler keeps state from one run to the next (a static, a thread_local, a file) or "
                "is nondeterministic (time, rand(), addresses, threads: use the Env's clock and token), so its "
                "replay does not show what was reported",
                v.schedules_to_first, v.seed, v.invariant, v.schedules_to_first - 1,
                v.schedules_to_first == 2 ? "" : "s");
          } else {
            // The first run of its process, as in the fresh one: no earlier run to keep state from.
            f.verdict = kNondeterministicVerdict;
            f.detail = fmt::format(
                "run 1 (seed {}) showed {}, but not when run again alone in a fresh process: the handler is "
                "nondeterministic (time, rand(), addresses, threads: use the Env's clock and token) or keeps state "
                "outside its process (a file), so its replay does not show what was reported",
                v.seed, v.invariant);
          }
          f.phase = "re-checking " + v.invariant;
          f.run = v.schedules_to_first;
          f.seed = v.seed;
          f.replay_command = replay_command(h.name, s, v.seed, options_.strategy, false);
          cells_[i]->failures.push_back(std::move(f));
        }
      } else {
        cells_[i]->failures.push_back(failure_of(c, h, s));
      }
      if (!cells_[i]->failures.empty()) cells_[i]->matched = false;
      --rechecks_left_[i];
    }
    if (rechecks_left_[i] == 0) {
      // Its result came in after a stop now (it was on its way, or its
      // re-check's): under way when the stop came, so dropped, as it said.
      if (options_.stop_now && !options_.stop_now->finish()) {
        cells_[i].reset();
        return;
      }
      // Failures found by re-checks in the order of the violations.
      auto& failures = cells_[i]->failures;
      std::stable_sort(failures.begin(), failures.end(),
                       [](const CellFailure& a, const CellFailure& b) { return a.phase < b.phase; });
      ++done_;
      if (options_.on_cell) options_.on_cell(*cells_[i], done_, static_cast<int>(total_));
    }
  }

  const std::vector<const HandlerInfo*>& handlers_;
  const std::vector<gateway::Scenario>& scenarios_;
  const ExploreOptions& options_;
  const IsolationLimits& limits_;
  const ExpectedMatrix& expected_;
  std::size_t total_ = 0;
  std::size_t jobs_ = 1;
  std::vector<std::optional<CellResult>> cells_;
  std::vector<int> rechecks_left_;
  std::deque<Work> queue_;
  std::vector<Child> running_;
  Clock::time_point last_progress_{};
  std::vector<std::size_t> free_slots_;
  char* beats_ = nullptr;
  std::size_t slot_of_child_ = 0;  // in a child: the slot it writes
  std::size_t beats_size_ = 0;
  int done_ = 0;
};

}  // namespace

std::string encode_cell(const CellResult& cell) { return cbor(to_wire(cell)); }

bool decode_cell(std::string_view bytes, CellResult& cell) {
  try {
    from_wire(json::from_cbor(bytes), cell);
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

MatrixResult explore_matrix_isolated(const std::vector<const HandlerInfo*>& handlers,
                                     const std::vector<gateway::Scenario>& scenarios, const ExploreOptions& options,
                                     const IsolationLimits& limits, const ExpectedMatrix& expected) {
  if (handlers.empty() || scenarios.empty()) return explore_matrix(handlers, scenarios, options, expected);
  // Each child signs the gateway's notifies, and the first HMAC of a process
  // fetches OpenSSL's implementation (providers, name tables): 8% of a
  // one-seed cell's process. Done once here, before the forks, every child
  // inherits it. It runs no handler code, so the parent stays as contained.
  (void)gateway::hmac_sha256_hex("twice", "the children inherit this HMAC's set-up");
  // Likewise SQLite's own set-up (its settings, built-in functions, the
  // twice-unix VFS): made in each child, it was page faults and work every
  // cell repeated. No database is opened here.
  (void)env::journal_vfs();
  // What a cell's process leaves when it dies (a crash, a kill) comes here, to be ended.
  const OrphanAdoption adoption;
  CellSupervisor supervisor(handlers, scenarios, options, limits, expected);
  return supervisor.run();
}

}  // namespace twice::explore
