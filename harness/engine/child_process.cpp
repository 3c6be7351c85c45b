#include "engine/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace twice::engine {
namespace {

// argv as the C array execv wants; the strings outlive the call.
std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child after fork(): only async-signal-safe calls until execv.
[[noreturn]] void exec_child(char* const* argv, const RunAs& as, int out_fd, bool new_session, pid_t parent,
                             bool own_group = false) {
  if (new_session) ::setsid();
  else if (own_group) ::setpgid(0, 0);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  if (out_fd >= 0) {
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
  }
  if (as.switch_user) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(as.gid) != 0 || ::setuid(as.uid) != 0) ::_exit(126);
  }
  // A program run to completion (initdb) dies with twice: the guardian
  // removes the folder it writes into. After setuid, which clears the setting.
  if (!new_session && (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)) ::_exit(125);
  ::execv(argv[0], argv);
  ::_exit(127);
}

}  // namespace

Status run_as_for(const std::string& user, RunAs& out) {
  out = RunAs{};
  if (::geteuid() != 0) return Status::OK();
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwnam_r(user.c_str(), &pw, buffer, sizeof buffer, &found) != 0 || !found)
    return Status::error(fmt::format("running as root, and there is no '{}' user to run the server as", user));
  out.switch_user = true;
  out.uid = pw.pw_uid;
  out.gid = pw.pw_gid;
  return Status::OK();
}

std::optional<std::string> find_program(const std::vector<std::string>& candidates) {
  for (const auto& c : candidates) {
    if (c.find('/') != std::string::npos) {
      if (::access(c.c_str(), X_OK) == 0) return c;
      continue;
    }
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
      const std::size_t end = std::min(dirs.find(':', start), dirs.size());
      const std::string full = dirs.substr(start, end - start) + "/" + c;
      if (end > start && ::access(full.c_str(), X_OK) == 0) return full;
      start = end + 1;
    }
  }
  return std::nullopt;
}

Status run_to_completion(const std::vector<std::string>& argv, const RunAs& as, std::string& output,
                         Guardian* guardian) {
  output.clear();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::error("pipe() failed");
  auto args = c_argv(argv);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::error("fork() failed");
  }
  if (pid == 0) exec_child(args.data(), as, fds[1], false, parent, guardian != nullptr);
  ::close(fds[1]);
  if (guardian) {
    // Both sides set the group, so that it exists before the guardian hears of it.
    ::setpgid(pid, pid);
    guardian->watch_group(pid);
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) output.append(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (guardian) guardian->watch_group(-1);  // its number may now go to another group
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return Status::OK();
  const std::string how = WIFEXITED(wstatus) ? fmt::format("exit status {}", WEXITSTATUS(wstatus))
                                             : fmt::format("signal {}", WTERMSIG(wstatus));
  return Status::error(fmt::format("{} failed ({}): {}", argv[0], how, last_lines(output, 3)));
}

pid_t start_background(const std::vector<std::string>& argv, const RunAs& as, const std::string& log_path,
                       Status& status) {
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    status = Status::error("cannot create " + log_path);
    return -1;
  }
  if (as.switch_user && ::fchown(log, as.uid, as.gid) != 0) {
    ::close(log);
    status = Status::error("cannot hand " + log_path + " to the server's user");
    return -1;
  }
  auto args = c_argv(argv);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(args.data(), as, log, true, 0);
  ::close(log);
  status = pid < 0 ? Status::error("fork() failed") : Status::OK();
  return pid;
}

bool wait_for_exit(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    int wstatus = 0;
    const pid_t r = ::waitpid(pid, &wstatus, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return false;
}

// The guardian is a shell: it reads lines on its stdin. "done" means the
// server was stopped in order; "group N" names a process group writing into
// the folder (mariadb-install-db and its mariadbd --bootstrap), "group -1"
// that it ended. End of file (this process is gone) means it must clean up
// itself: SIGKILL to the group it watches, if any (and a second to see it
// gone); then the server, if one started (its pid is the first line of
// data/postmaster.pid): the stop signal, 20 s of patience, SIGKILL; then the
// folder goes. Killing the group first keeps a program from writing files
// again into a folder just removed.
static constexpr const char* kGuardianScript =
    "group=; while read word arg; do "
    "case $word in done) exit 0;; group) if [ \"$arg\" -gt 1 ] 2>/dev/null; then group=$arg; else group=; fi;; esac; "
    "done; "
    "if [ -n \"$group\" ]; then kill -KILL -$group 2>/dev/null; i=0; "
    "while kill -0 -$group 2>/dev/null && [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done; fi; "
    "pid=$(head -n 1 \"$2/data/postmaster.pid\" 2>/dev/null); "
    "if [ -n \"$pid\" ]; then kill -$1 $pid 2>/dev/null; i=0; "
    "while kill -0 $pid 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
    "kill -KILL $pid 2>/dev/null; fi; rm -rf -- \"$2\"";

Status Guardian::start(int stop_signal, const std::string& folder) {
  dismiss();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::error("pipe() failed");
  const std::vector<std::string> argv = {"/bin/sh", "-c", kGuardianScript, "twice-guardian",
                                         std::to_string(stop_signal), folder};
  auto args = c_argv(argv);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // stdin is the pipe's read end (dup2 clears its close-on-exec flag).
    ::setsid();
    ::dup2(fds[0], 0);
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return Status::error("fork() failed");
  }
  pid_ = pid;
  pipe_fd_ = fds[1];
  return Status::OK();
}

void Guardian::watch_group(pid_t pgid) {
  if (pid_ < 0) return;
  const std::string line = fmt::format("group {}\n", pgid);
  [[maybe_unused]] const ssize_t n = ::write(pipe_fd_, line.data(), line.size());
}

void Guardian::dismiss() {
  if (pid_ < 0) return;
  static constexpr char kDone[] = "done\n";
  [[maybe_unused]] const ssize_t n = ::write(pipe_fd_, kDone, sizeof kDone - 1);
  ::close(pipe_fd_);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  pipe_fd_ = -1;
}

std::string last_lines(const std::string& text, int n) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) --end;
  std::size_t start = end;
  for (int seen = 0; start > 0; --start) {
    if (text[start - 1] == '\n' && ++seen == n) break;
  }
  std::string out = text.substr(start, end - start);
  for (auto& c : out)
    if (c == '\n') c = ' ';
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Status wait_until_serving(pid_t& pid, const std::function<bool()>& answers, const std::string& log_path) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  for (;;) {
    if (answers()) break;
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
      pid = -1;
      return Status::error("the server exited: " + last_lines(read_text(log_path), 2));
    }
    if (elapsed() > 60)
      return Status::error("the server did not accept connections within 60 s: " + last_lines(read_text(log_path), 2));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::OK();
}

void stop_server(pid_t& pid, int stop_signal, const std::string& folder, Guardian& guardian) {
  if (pid > 0) {
    ::kill(pid, stop_signal);
    wait_for_exit(pid, 30);
    pid = -1;
  }
  if (!folder.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(folder, ec);
  }
  guardian.dismiss();
}

std::string server_base_folder(const char* override_env) {
  if (const char* dir = std::getenv(override_env)) return dir;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  std::string base = std::filesystem::temp_directory_path(ec).string();
  if (ec || base.size() + 32 > kMaxSocketPath) base = "/tmp";
  return base;
}

}  // namespace twice::engine
