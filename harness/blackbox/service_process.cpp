#include "blackbox/service_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "blackbox/http_post.h"

namespace twice::blackbox {
namespace {

// The log's last lines, joined with " | ", for a one-line message.
std::string log_tail(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out.empty() ? "(no output)" : out;
}

}  // namespace

Status ServiceProcess::start(const std::string& command, const HttpEndpoint& endpoint, const std::string& log_path,
                             Micros ready_timeout, std::unique_ptr<ServiceProcess>& out) {
  std::unique_ptr<ServiceProcess> p(new ServiceProcess(command, endpoint, log_path, ready_timeout));
  if (Status s = p->spawn_and_wait(); !s.ok()) return s;
  out = std::move(p);
  return Status::OK();
}

ServiceProcess::~ServiceProcess() {
  if (pid_ > 0) kill9();
}

void ServiceProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the group: whatever the service forked goes too
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  ++kills_;
}

Status ServiceProcess::restart() { return spawn_and_wait(); }

Status ServiceProcess::spawn_and_wait() {
  // Whatever answers on the endpoint is taken for the service started here:
  // another one already there would be tested instead, and the nemesis would
  // kill nothing that serves.
  if (probe(endpoint_, 500 * kMillisecond).kind != HttpOutcome::Kind::kRefused)
    return Status::error(fmt::format("something already listens on {}:{}{}: stop it, or leave out --endpoint-command",
                                     endpoint_.host, endpoint_.port,
                                     started_ ? " (it came up while twice had killed the service)" : ""));
  // The first start writes a fresh log, so that a failure quotes this run's lines only.
  const int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | (started_ ? O_APPEND : O_TRUNC) | O_CLOEXEC, 0644);
  if (log < 0) return Status::error(fmt::format("{}: cannot write the service's log: {}", log_path_, std::strerror(errno)));
  const std::string shell_command = "exec " + command_;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(125);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(log);
  if (pid < 0) return Status::error("fork() failed");
  ::setpgid(pid, pid);  // also here: no race with a kill before the child ran
  pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(ready_timeout_);
  for (;;) {
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Status::error(fmt::format("--endpoint-command '{}' exited ({}) before answering on {}; its log {}: {}",
                                       command_,
                                       WIFEXITED(wstatus) ? fmt::format("status {}", WEXITSTATUS(wstatus))
                                                          : fmt::format("signal {}", WTERMSIG(wstatus)),
                                       endpoint_.url, log_path_, log_tail(log_path_)));
    }
    if (probe(endpoint_, 200 * kMillisecond).kind == HttpOutcome::Kind::kAnswered) {
      // The answer must be the service's: still running, it is the one that holds the port.
      if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
        pid_ = -1;
        return Status::error(fmt::format("--endpoint-command '{}' exited, and something else answers on {}; its log {}: {}",
                                         command_, endpoint_.url, log_path_, log_tail(log_path_)));
      }
      started_ = true;
      return Status::OK();
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill9();
      --kills_;
      return Status::error(fmt::format("--endpoint-command '{}' did not answer on {} within {}; its log {}: {}",
                                       command_, endpoint_.url, format_duration(ready_timeout_), log_path_,
                                       log_tail(log_path_)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace twice::blackbox
