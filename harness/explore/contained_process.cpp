#include "explore/contained_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "env/run_database.h"
#include "env/sqlite_db.h"
#include "process/child_io.h"
#include "process/signal_safe_text.h"
#include "sim/heartbeat.h"

namespace twice::explore {
namespace {

// The contained children alive, for stop_contained_now(): a fixed table, so
// that a signal handler reads it without a lock. 0: a free entry.
constexpr int kMaxChildren = 512;
std::atomic<pid_t> g_children[kMaxChildren];
// The runs' database folder, opened before the first fork: a signal handler
// cannot build its path.
std::atomic<int> g_database_folder{-1};
int g_twice_stdout = STDOUT_FILENO;  // in a contained child: twice's own stdout

void note_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t free = 0;
    if (slot.compare_exchange_strong(free, pid)) return;
  }
  // More than the table holds (not with -j <= 256): still killed by PDEATHSIG when twice dies.
}

void forget_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

// "twice-<pid>-" into `out` (at least 32 bytes), async-signal-safe; its length.
std::size_t database_prefix(pid_t pid, char* out) {
  std::size_t length = 0;
  for (const char c : {'t', 'w', 'i', 'c', 'e', '-'}) out[length++] = c;
  length += process::put_decimal(static_cast<unsigned long>(pid), out + length, 24);
  out[length++] = '-';
  return length;
}

// Calls `each(name)` for every entry of the open folder `folder`, read from
// its start: getdents64, no allocation. Async-signal-safe.
template <class Each>
void for_each_entry(int folder, Each each) {
  if (::lseek(folder, 0, SEEK_SET) != 0) return;
  alignas(8) char buffer[8192];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, folder, buffer, sizeof buffer);
    if (n <= 0) return;
    for (long at = 0; at < n;) {
      struct Entry {  // struct linux_dirent64
        std::uint64_t ino;
        std::int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Entry*>(buffer + at);
      at += e->reclen;
      each(e->name);
    }
  }
}

// Removes the files in the database folder whose names start with one of
// `prefixes`. Async-signal-safe.
void remove_databases_now(const char (*prefixes)[32], const std::size_t* lengths, int count) {
  const int folder = g_database_folder.load();
  if (folder < 0) return;
  // The whole folder is read first, then the files removed: removing while
  // reading could skip entries.
  for (int pass = 0; pass < 8; ++pass) {
    bool removed = false;
    for_each_entry(folder, [&](const char* name) {
      for (int p = 0; p < count; ++p)
        if (std::strncmp(name, prefixes[p], lengths[p]) == 0 && ::unlinkat(folder, name, 0) == 0) removed = true;
    });
    if (!removed) return;
  }
}

// Up to `capacity` children of this process into `out`; how many. Read from
// each /proc/<pid>/stat's parent field, not /proc/<pid>/task/<tid>/children:
// kernels built without CONFIG_PROC_CHILDREN have no such file (the one these
// tests first ran on had none). Async-signal-safe.
int list_children(pid_t* out, int capacity) {
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  const long self = ::getpid();
  int count = 0;
  for_each_entry(proc, [&](const char* name) {
    long pid = 0;
    std::size_t length = 0;
    for (; name[length] != '\0'; ++length) {
      if (name[length] < '0' || name[length] > '9' || length > 9) return;
      pid = pid * 10 + (name[length] - '0');
    }
    if (length == 0 || count >= capacity) return;
    char path[24];
    std::memcpy(path, name, length);
    std::memcpy(path + length, "/stat", 6);
    const int fd = ::openat(proc, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;  // gone already
    char stat[512];
    const ssize_t n = ::read(fd, stat, sizeof stat - 1);
    ::close(fd);
    if (n <= 0) return;
    // "pid (comm) S ppid ...": the name may hold spaces and parentheses, so the last ')'.
    const char* end = stat + n;
    const char* at = end;
    while (at > stat && at[-1] != ')') --at;
    if (at == stat || end - at < 4) return;
    at += 3;  // past ") S"
    while (at < end && *at == ' ') ++at;
    long parent = 0;
    for (; at < end && *at >= '0' && *at <= '9'; ++at) parent = parent * 10 + (*at - '0');
    if (parent == self) out[count++] = static_cast<pid_t>(pid);
  });
  ::close(proc);
  return count;
}

// Kills and reaps every child of this process that `spare(pid)` does not
// name, then what their deaths hand to it (a child subreaper adopts its
// children's orphans), until none is left. Returns how many were still
// running (a child that had already exited is reaped, not counted).
// Async-signal-safe.
template <class Spare>
int end_children(Spare spare) {
  int running = 0;
  pid_t unkillable[16];  // not ours to signal (a set-user-ID program): not waited for
  int unkillables = 0;
  // Bounded, so that a handler forking as fast as it is killed cannot hold twice for ever.
  for (int pass = 0; pass < 4096; ++pass) {
    pid_t children[256];
    const int n = list_children(children, 256);
    int ended = 0;
    for (int i = 0; i < n; ++i) {
      const pid_t pid = children[i];
      if (spare(pid) || std::find(unkillable, unkillable + unkillables, pid) != unkillable + unkillables) continue;
      if (::waitpid(pid, nullptr, WNOHANG) == pid) {
        ++ended;
        continue;
      }
      if (::kill(pid, SIGKILL) != 0) {
        if (unkillables < 16) unkillable[unkillables++] = pid;
        continue;
      }
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      ++ended;
      ++running;
    }
    if (ended == 0) break;
  }
  return running;
}

// This process's children when it became a child subreaper (an
// OrphanAdoption): its own, never ended as orphans. Fixed, for a signal handler.
constexpr int kMaxOwnChildren = 64;
std::atomic<pid_t> g_own_children[kMaxOwnChildren];
std::atomic<bool> g_adopting{false};

bool is_contained_child(pid_t pid) {
  for (const auto& slot : g_children)
    if (slot.load() == pid) return true;
  return false;
}

// In a process adopting orphans: ends every child that is neither a contained
// child nor one it had before; how many were running. Async-signal-safe.
int end_orphans() {
  if (!g_adopting.load()) return 0;
  return end_children([](pid_t pid) {
    if (is_contained_child(pid)) return true;
    for (const auto& own : g_own_children)
      if (own.load() == pid) return true;
    return false;
  });
}

// A contained child's end: "crashed: SIGSEGV" and "died by SIGSEGV (Segmentation fault)".
void describe_signal(int sig, std::string& verdict, std::string& what) {
  verdict = fmt::format("crashed: {}", process::signal_name(sig));
  what = fmt::format("died by {} ({})", process::signal_name(sig), ::strsignal(sig));
}

}  // namespace

pid_t fork_contained() {
  if (g_database_folder.load() < 0)
    g_database_folder = ::open(env::database_folder().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // No signal handler may run in the child before its handlers are reset,
  // nor in the parent between the fork and the child's pid being noted.
  sigset_t all, before;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &before);
  process::flush_before_fork();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    throw std::runtime_error(fmt::format("cannot fork a contained process: {}", std::strerror(error)));
  }
  if (pid == 0) {
    for (auto& slot : g_children) slot.store(0);  // the parent's children are not this one's
    g_adopting = false;
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(125);
    // What a handler forks and leaves (a daemon's setsid() and second fork
    // take it out of the group) becomes this process's child, not init's:
    // end_descendants() finds it.
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) ::_exit(125);
    // Every handler of twice's back at the default (twice's own ignores stay).
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction action {};
      if (::sigaction(sig, nullptr, &action) != 0) continue;
      if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
      ::signal(sig, SIG_DFL);
    }
    // (With twice's stdin closed, /dev/null opens as 0, and stays.)
    if (const int null = ::open("/dev/null", O_RDONLY); null > STDIN_FILENO) {
      ::dup2(null, STDIN_FILENO);
      ::close(null);
    }
    g_twice_stdout = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (g_twice_stdout < 0) g_twice_stdout = STDOUT_FILENO;
    else ::dup2(STDERR_FILENO, STDOUT_FILENO);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    return 0;
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  note_child(pid);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return pid;
}

int twice_stdout() { return g_twice_stdout; }

void kill_contained(pid_t pid) {
  ::kill(-pid, SIGKILL);  // the group, when the child made it
  ::kill(pid, SIGKILL);
}

int end_descendants() { return end_children([](pid_t) { return false; }); }

OrphanAdoption::OrphanAdoption() {
  int was = 0;
  ::prctl(PR_GET_CHILD_SUBREAPER, &was);
  was_subreaper_ = was != 0;
  if (g_adopting.load()) return;  // an adoption already under way (nested): it ends the orphans
  pid_t own[kMaxOwnChildren + 1];
  const int n = list_children(own, kMaxOwnChildren + 1);
  // More children of its own than the table holds: one unlisted would be
  // taken for an orphan and killed, so nothing is adopted (init gets a
  // crashed cell's daemon, as before).
  if (n > kMaxOwnChildren) return;
  for (int i = 0; i < kMaxOwnChildren; ++i) g_own_children[i] = i < n ? own[i] : 0;
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return;
  g_adopting = true;
  mine_ = true;
}

OrphanAdoption::~OrphanAdoption() {
  if (!mine_) return;
  end_orphans();
  g_adopting = false;
  if (!was_subreaper_) ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

int reap_contained(pid_t pid, bool ended_normally, int* processes_left) {
  // The child has exited; what it forked may still run, in its group or,
  // adopted by this process, out of it (a daemon). A child that ended
  // normally ended its descendants itself: this process has adopted none of
  // them, and its scan of /proc is saved (one per cell).
  const int left = ended_normally ? 0 : end_orphans();
  if (processes_left) *processes_left = left;
  ::kill(-pid, SIGKILL);
  if (!ended_normally) env::remove_process_databases(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  forget_child(pid);
  return status;
}

void kill_contained_now() {
  for (auto& slot : g_children)
    if (const pid_t pid = slot.load(); pid > 0) kill_contained(pid);
}

void stop_contained_now() {
  pid_t pids[kMaxChildren];
  int count = 0;
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid > 0) pids[count++] = pid;
  }
  for (int i = 0; i < count; ++i) kill_contained(pids[i]);
  for (int i = 0; i < count; ++i)
    while (::waitpid(pids[i], nullptr, 0) < 0 && errno == EINTR) {
    }
  // What they left out of their groups, adopted by this process: before it dies and init adopts them.
  end_orphans();
  // Their files and this process's own (an --in-process run's).
  static char prefixes[kMaxChildren + 1][32];
  static std::size_t lengths[kMaxChildren + 1];
  for (int i = 0; i < count; ++i) lengths[i] = database_prefix(pids[i], prefixes[i]);
  lengths[count] = database_prefix(::getpid(), prefixes[count]);
  remove_databases_now(prefixes, lengths, count + 1);
}

std::string hung_verdict(int timeout_seconds) {
  return fmt::format("hung: no scheduling point for {} s", timeout_seconds);
}

std::string hung_what(int timeout_seconds) {
  return fmt::format(
      "reached no scheduling point (no database, lock, clock, gateway or service call) for {} s and was killed",
      timeout_seconds);
}

ContainedEnd run_contained(int timeout_seconds, const std::function<int()>& body) {
  // The heartbeat (sim/heartbeat.h), and the status `body` returned (-1: not yet).
  struct Shared {
    std::atomic<std::uint64_t> beat;
    std::atomic<int> returned;
    std::atomic<int> left;  // processes the run left running, ended by the child
  };
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error(fmt::format("cannot map a shared page: {}", std::strerror(errno)));
  auto* shared = new (page) Shared{};
  shared->returned = -1;
  const OrphanAdoption adoption;
  const pid_t pid = fork_contained();
  if (pid == 0) {
    sim::heartbeat = &shared->beat;
    int status = 3;
    try {
      status = body();
    } catch (const std::exception& e) {
      std::cerr << "twice: internal error: " << e.what() << "\n";
    }
    shared->left = end_descendants();
    shared->returned = status;
    env::RunDatabase::of_this_thread().remove_before_exit();
    std::cout.flush();
    std::fflush(nullptr);
    ::_exit(status);
  }
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  std::uint64_t last_beat = 0;
  auto last_sign_of_life = std::chrono::steady_clock::now();
  bool hung = false;
  for (;;) {
    pollfd exited{pidfd, POLLIN, 0};
    ::poll(pidfd >= 0 ? &exited : nullptr, pidfd >= 0 ? 1 : 0, 200);
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) break;
    const auto now = std::chrono::steady_clock::now();
    if (const std::uint64_t b = shared->beat.load(std::memory_order_relaxed); b != last_beat) {
      last_beat = b;
      last_sign_of_life = now;
    }
    if (!hung && now - last_sign_of_life > std::chrono::seconds(timeout_seconds)) {
      kill_contained(pid);
      hung = true;
    }
  }
  const int returned = shared->returned.load();
  // A status of its own, as `body` returned it: anything else is the handler's doing.
  ContainedEnd end;
  const bool removed_nothing = returned >= 0 && !hung;
  int orphans = 0;
  const int status = reap_contained(pid, removed_nothing, &orphans);
  end.processes_left = shared->left.load() + orphans;
  if (pidfd >= 0) ::close(pidfd);
  ::munmap(page, sizeof(Shared));
  std::string what;
  if (hung) {
    end.verdict = hung_verdict(timeout_seconds);
    what = hung_what(timeout_seconds);
  } else if (WIFSIGNALED(status)) {
    describe_signal(WTERMSIG(status), end.verdict, what);
  } else if (returned >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == returned) {
    end.finished = true;
    end.status = returned;
    return end;
  } else {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    end.verdict = fmt::format("exited: {}", code);
    what = fmt::format("exited with status {} before the run ended (the handler called exit()?)", code);
  }
  end.detail = "the process running the replay " + what;
  return end;
}

}  // namespace twice::explore
