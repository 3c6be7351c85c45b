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

// Removes the files in the database folder whose names start with one of
// `prefixes`: getdents64 and unlinkat, no allocation. Async-signal-safe.
void remove_databases_now(const char (*prefixes)[32], const std::size_t* lengths, int count) {
  const int folder = g_database_folder.load();
  if (folder < 0) return;
  // The whole folder is read first, then the files removed: removing while
  // reading could skip entries.
  for (int pass = 0; pass < 8; ++pass) {
    bool removed = false;
    if (::lseek(folder, 0, SEEK_SET) != 0) return;
    alignas(8) char buffer[8192];
    for (;;) {
      const long n = ::syscall(SYS_getdents64, folder, buffer, sizeof buffer);
      if (n <= 0) break;
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
        for (int p = 0; p < count; ++p)
          if (std::strncmp(e->name, prefixes[p], lengths[p]) == 0 && ::unlinkat(folder, e->name, 0) == 0) removed = true;
      }
    }
    if (!removed) return;
  }
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
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(125);
    // Every handler of twice's back at the default (twice's own ignores stay).
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction action {};
      if (::sigaction(sig, nullptr, &action) != 0) continue;
      if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
      ::signal(sig, SIG_DFL);
    }
    if (const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC); null >= 0) {
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

int reap_contained(pid_t pid, bool remove_databases) {
  // The child has exited; what it forked may still run, in its group.
  ::kill(-pid, SIGKILL);
  if (remove_databases) env::remove_process_databases(pid);
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
  };
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw std::runtime_error(fmt::format("cannot map a shared page: {}", std::strerror(errno)));
  auto* shared = new (page) Shared{};
  shared->returned = -1;
  const pid_t pid = fork_contained();
  if (pid == 0) {
    sim::heartbeat = &shared->beat;
    int status = 3;
    try {
      status = body();
    } catch (const std::exception& e) {
      std::cerr << "twice: internal error: " << e.what() << "\n";
    }
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
  const int status = reap_contained(pid, !removed_nothing);
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
