// What was once checked only by hand: `twice run` on a real terminal (a
// pseudo-terminal from forkpty, so isatty() is true as in a person's shell):
// colour by --color and NO_COLOR, the progress line cleared after Ctrl-C; exit
// status 3 for an internal error; and run-matrix.sh building the `twice`
// command alone.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../catches_sigint.h"

#include "../unique_temp_dir.h"

namespace {

using twice::testing::catches_sigint;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Terminal {
  int exit_code = -1;  // -1: killed by a signal
  std::string text;    // everything written to the terminal, stdout and stderr
};

// Runs `twice args...` in TWICE_SOURCE_DIR on a new pseudo-terminal, with
// NO_COLOR set to `no_color` (nullptr: unset). `on_text` sees the text so far
// after each read and may act on the child (send it Ctrl-C); it returns true
// once it has done what it wanted.
Terminal on_a_terminal(const std::vector<std::string>& args, const char* no_color,
                       const std::function<bool(const std::string&, pid_t)>& on_text = nullptr) {
  int master = -1;
  winsize size{};
  size.ws_row = 50;
  size.ws_col = 100;
  const pid_t child = ::forkpty(&master, nullptr, nullptr, &size);
  if (child < 0) return {};
  if (child == 0) {
    if (no_color) ::setenv("NO_COLOR", no_color, 1);
    else ::unsetenv("NO_COLOR");
    if (::chdir(TWICE_SOURCE_DIR) != 0) ::_exit(126);
    std::vector<char*> argv{const_cast<char*>(TWICE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(TWICE_BINARY, argv.data());
    ::_exit(127);
  }
  Terminal t;
  bool acted = !on_text;
  const auto deadline = Clock::now() + std::chrono::seconds(300);
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      std::array<char, 4096> buf{};
      const ssize_t n = ::read(master, buf.data(), buf.size());
      if (n <= 0) break;  // EIO: the child closed the terminal's last descriptor
      t.text.append(buf.data(), static_cast<std::size_t>(n));
      if (!acted) acted = on_text(t.text, child);
    }
    if (Clock::now() > deadline) {
      ::kill(child, SIGKILL);
      break;
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(child, &status, 0);
  t.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return t;
}

const std::vector<std::string> kSmallRun = {"run", "--handler", "cas", "--scenario", "sequential-duplicates",
                                            "--seeds", "2", "-q", "--no-report"};

bool has_sgr(const std::string& text) {  // a colour or weight: ESC [ ... m
  for (auto at = text.find("\x1b["); at != std::string::npos; at = text.find("\x1b[", at + 2)) {
    const auto end = text.find_first_not_of("0123456789;", at + 2);
    if (end != std::string::npos && text[end] == 'm') return true;
  }
  return false;
}

TEST(Terminal, AutoColoursATerminalUnlessNoColorIsSet) {
  const Terminal plain = on_a_terminal(kSmallRun, nullptr);
  ASSERT_EQ(plain.exit_code, 0) << plain.text;
  EXPECT_TRUE(has_sgr(plain.text)) << plain.text;
  EXPECT_NE(plain.text.find("matrix matches"), std::string::npos) << plain.text;

  const Terminal no_color = on_a_terminal(kSmallRun, "1");
  ASSERT_EQ(no_color.exit_code, 0) << no_color.text;
  EXPECT_FALSE(has_sgr(no_color.text)) << no_color.text;
  EXPECT_NE(no_color.text.find("matrix matches"), std::string::npos) << no_color.text;

  // An empty NO_COLOR is not set (no-color.org), and --color wins over it either way.
  EXPECT_TRUE(has_sgr(on_a_terminal(kSmallRun, "").text));
  std::vector<std::string> never = kSmallRun;
  never.insert(never.end(), {"--color", "never"});
  EXPECT_FALSE(has_sgr(on_a_terminal(never, nullptr).text));
  std::vector<std::string> always = kSmallRun;
  always.insert(always.end(), {"--color", "always"});
  EXPECT_TRUE(has_sgr(on_a_terminal(always, "1").text));
}


// On a terminal the progress is one line rewritten in place ("\r\x1b[K[n/N]
// ..."). Ctrl-C once a cell is done: the line is cleared before the message
// about stopping, and before the report, so no text starts mid-line.
TEST(Terminal, CtrlCClearsTheProgressLineBeforeWhatFollows) {
  bool sent = false;
  const Terminal t = on_a_terminal(
      {"run", "--seeds", "20", "-j1", "--no-report", "--color", "never"}, nullptr,
      [&](const std::string& text, pid_t child) {
        if (text.find("\r\x1b[K[1/") == std::string::npos || !catches_sigint(child)) return false;
        ::kill(child, SIGINT);
        return sent = true;
      });
  ASSERT_TRUE(sent) << "no progress line came: " << t.text;
  EXPECT_EQ(t.exit_code, 130) << t.text;
  const auto said = t.text.find("twice: stopping after the cells under way");
  ASSERT_NE(said, std::string::npos) << t.text;
  EXPECT_EQ(t.text.substr(said - 4, 4), "\r\x1b[K") << "the message starts mid-line: " << t.text.substr(0, said + 80);
  // Every progress line is cleared before the next text that is not one.
  for (auto at = t.text.find("\r\x1b[K["); at != std::string::npos; at = t.text.find("\r\x1b[K[", at + 1)) {
    const auto next = t.text.find('\r', at + 1);
    ASSERT_NE(next, std::string::npos) << "the last progress line was never cleared: " << t.text.substr(at, 200);
    const std::string between = t.text.substr(at, next - at);
    EXPECT_EQ(between.find('\n'), std::string::npos) << "text after a progress line on its line: " << between;
  }
  EXPECT_NE(t.text.find("interrupted: the matrix is incomplete"), std::string::npos) << t.text;
}

// An exhaustive search of about a million schedules takes minutes: the
// progress line says what the cell under way is doing after 2 s (nothing was
// shown until it ended), and one Ctrl-C ends it as interrupted (it ran on).
TEST(Terminal, ALongCellShowsItsProgressAndCtrlCEndsAnExhaustiveSearch) {
  bool sent = false;
  const Terminal t = on_a_terminal(
      {"run", "--handler", "cas", "--scenario", "forged-callbacks", "--strategy", "exhaustive", "-j1", "--no-report",
       "--color", "never"},
      nullptr, [&](const std::string& text, pid_t child) {
        if (text.find("cas × forged-callbacks: exploring, run ") == std::string::npos || !catches_sigint(child))
          return false;
        ::kill(child, SIGINT);
        return sent = true;
      });
  ASSERT_TRUE(sent) << "no progress line came: " << t.text;
  EXPECT_EQ(t.exit_code, 130) << t.text;
  EXPECT_NE(t.text.find("cas × forged-callbacks: interrupted after "), std::string::npos) << t.text;
  EXPECT_NE(t.text.find("interrupted: the matrix is incomplete"), std::string::npos) << t.text;
}

// Exit 3 is twice's own failure, not the user's input: here the process may
// hold 4 files, stdin, stdout and stderr among them, so it cannot make the
// pipe a cell's process answers on. One line says so.
TEST(Terminal, AnInternalErrorExitsThreeWithOneLine) {
#ifdef __SANITIZE_ADDRESS__
  // The sanitizer runtime makes pipes of its own (UBSan's vptr check tests the
  // memory it reads through one); with four files it cannot, and it reports
  // every virtual call as an invalid object instead of letting twice fail as
  // the test means. The Release suite (ctest) runs this test.
  GTEST_SKIP() << "needs a twice without sanitizers: run by ctest in the Release build";
#endif
  const std::string out = (twice::testing::unique_temp_dir() / "internal-error.out").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close_range(3, ~0U, 0);
    // A sanitized twice (scripts/test.sh) must not turn the exit status into LeakSanitizer's.
    ::setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    const rlimit four{4, 4};
    ::setrlimit(RLIMIT_NOFILE, &four);
    if (::chdir(TWICE_SOURCE_DIR) != 0) ::_exit(126);
    ::execl(TWICE_BINARY, TWICE_BINARY, "run", "--handler", "cas", "--scenario", "sequential-duplicates", "--seeds",
            "2", "-q", "--no-report", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  std::stringstream stream;
  stream << std::ifstream(out).rdbuf();
  const std::string printed = stream.str();
  ASSERT_TRUE(WIFEXITED(status)) << printed;
  EXPECT_EQ(WEXITSTATUS(status), 3) << printed;
  EXPECT_NE(printed.find("twice: internal error: cannot make a pipe: Too many open files\n"), std::string::npos)
      << printed;
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 1) << printed;
}

// scripts/run-matrix.sh builds `twice` alone (not the tests and benchmarks),
// its output in the build folder's build-twice.log, then runs it with the
// arguments given. ninja and the build folder are stand-ins that record
// what they were asked; setup.sh's package check finds the packages the
// suite was built with.
TEST(RunMatrixScript, BuildsOnlyTheTwiceCommandThenRunsIt) {
  const fs::path dir = twice::testing::unique_temp_dir() / "run-matrix";
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "build");
  std::ofstream(dir / "build" / "build.ninja") << "# configured\n";
  auto script = [](const fs::path& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
  };
  script(dir / "bin" / "ninja", fmt::format("echo \"$@\" >> '{}'\necho '[1/1] Linking CXX executable twice'\n",
                                            (dir / "ninja-args").string()));
  script(dir / "build" / "twice", fmt::format("echo \"$@\" > '{}'\n", (dir / "twice-args").string()));
  const std::string cmd =
      fmt::format("cd '{}' && env -u TWICE_BUILD_TARGETS -u TWICE_BUILD_LOG -u TWICE_JOBS PATH='{}':\"$PATH\" "
                  "TWICE_BUILD_DIR='{}' bash scripts/run-matrix.sh --seeds 1 2>&1",
                  TWICE_SOURCE_DIR, (dir / "bin").string(), (dir / "build").string());
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string printed;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) printed.append(buf.data(), n);
  ASSERT_EQ(::pclose(pipe), 0) << printed;
  auto read = [](const fs::path& p) {
    std::stringstream s;
    s << std::ifstream(p).rdbuf();
    return s.str();
  };
  EXPECT_EQ(read(dir / "ninja-args"), fmt::format("-C {} -j2 twice\n", (dir / "build").string())) << printed;
  EXPECT_EQ(read(dir / "build" / "build-twice.log"), "[1/1] Linking CXX executable twice\n");
  EXPECT_EQ(printed.find("Linking"), std::string::npos) << "ninja's lines belong in the log: " << printed;
  EXPECT_EQ(read(dir / "twice-args"), "run --report-dir twice-report --seeds 1\n");
}

}  // namespace
