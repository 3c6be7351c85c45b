// Runs the `twice` command built beside the tests, from the source folder
// (so bundled scenario names and scenarios/expected.toml resolve), and keeps
// its exit code and output. Shared by the CLI test files of twice_cli_tests,
// which define TWICE_SOURCE_DIR and TWICE_BINARY (tests/cli/CMakeLists.txt).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace twice::testing {

struct CliOutput {
  int exit_code = -1;
  std::string out;  // stdout, and stderr unless sent elsewhere
};

// `stderr_to`: where stderr goes ("&1": with stdout; "/dev/null": away).
inline CliOutput run_twice(const std::string& args, const std::string& stderr_to = "&1") {
  const std::string cmd = fmt::format("cd '{}' && '{}' {} 2>{}", TWICE_SOURCE_DIR, TWICE_BINARY, args, stderr_to);
  CliOutput o;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return o;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) o.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// The same, as the tests write it: twice("run --handler ..."), the command as a
// user types it. Each test file says `using twice::testing::twice;`.
inline CliOutput twice(const std::string& args, const std::string& stderr_to = "&1") {
  return run_twice(args, stderr_to);
}

}  // namespace twice::testing
