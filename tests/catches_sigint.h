// catches_sigint(pid): true once process `pid` has a handler for SIGINT (the
// SigCgt mask in /proc/<pid>/status). A test that sends Ctrl-C to a `twice`
// it started waits for this first: sent earlier, SIGINT's default action ends
// the process before twice could answer it. Header-only, for every test binary.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

namespace twice::testing {

inline bool catches_signal(pid_t pid, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("SigCgt:")) return (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1;
  return false;
}

inline bool catches_sigint(pid_t pid) { return catches_signal(pid, SIGINT); }

// True once process `pid` (any of its threads) has a child process: for
// `twice run`, a cell's process has started.
inline bool has_child_process(pid_t pid) {
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream children(task.path() / "children");
    if (std::string first; children >> first) return true;
  }
  return false;
}

}  // namespace twice::testing
