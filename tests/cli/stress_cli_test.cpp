// `twice stress` on the ways a run ends badly: a handler that crashes, exits,
// spins or calls a service; a stop signal; an engine that cannot run after
// another one reported; a --json file that must survive a failed run; input
// out of range. Each run's database folder goes in a TMPDIR of the test's
// own, which must be empty afterwards. Real threads: only what holds on every
// run is asserted; the waits are bounds, never speeds.
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unique_temp_dir.h"
#include "run_twice.h"

namespace {

namespace fs = std::filesystem;
using twice::testing::CliOutput;
using twice::testing::twice;

// The TMPDIR the runs under test see: a fresh folder, empty between tests.
class StressCli : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = twice::testing::unique_temp_dir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(tmp_);
    ::setenv("TMPDIR", tmp_.c_str(), 1);
  }
  void TearDown() override { ::unsetenv("TMPDIR"); }

  // The run's leftovers in TMPDIR ("" when none).
  std::string leftovers() const {
    std::string out;
    for (const auto& e : fs::directory_iterator(tmp_)) out += e.path().filename().string() + " ";
    return out;
  }
  // A shell script run from the source folder, with $twice and $plugin set; its exit code and output.
  CliOutput script(const std::string& body) const {
    const std::string path = (tmp_.parent_path() / "script.sh").string();
    std::ofstream(path) << "twice='" << TWICE_BINARY << "'\nplugin='" << TWICE_HOSTILE_PLUGIN << "'\ncd '"
                        << TWICE_SOURCE_DIR << "'\n"
                        << body << "\n";
    CliOutput o;
    FILE* pipe = ::popen(fmt::format("sh '{}' 2>&1", path).c_str(), "r");
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) o.out.append(buf, n);
    const int status = ::pclose(pipe);
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return o;
  }
  std::string file(const std::string& name) const { return (tmp_.parent_path() / name).string(); }

  fs::path tmp_;
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string plugin() { return fmt::format("--plugin {}", TWICE_HOSTILE_PLUGIN); }

// A handler that calls exit(0) or crashes takes down its run's process, not
// twice: a message that says what happened, exit 1 (never 0), the JSON says
// it, and the run's database folder is gone.
TEST_F(StressCli, AHandlerThatExitsOrCrashesEndsItsRunNotTwice) {
  const std::pair<const char*, const char*> cases[] = {
      {"exit", "the handler called exit() during the stress run; no report"},
      {"segfault", "the handler crashed during the stress run (SIGSEGV: Segmentation fault); no report"},
      {"abort", "the handler crashed during the stress run (SIGABRT: Aborted); no report"},
  };
  // Under ASan (scripts/test.sh runs this against the sanitized twice) the
  // kernel, not ASan's handlers, is to end the crashing run, as without
  // sanitizers (tests/hostile/hostile_test.sh does the same).
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string saved = asan ? asan : "";
  ::setenv("ASAN_OPTIONS", "handle_segv=0:handle_abort=0:detect_leaks=0:abort_on_error=1", 1);
  for (const auto& [name, message] : cases) {
    const std::string json = file(fmt::format("{}.json", name));
    const auto o = twice(fmt::format("stress {} --handler hostile-{} --orders 50 -q --json {}", plugin(), name, json));
    EXPECT_EQ(o.exit_code, 1) << name << ": " << o.out;
    EXPECT_EQ(o.out, fmt::format("twice: stress: {}\n", message)) << name;
    const auto j = nlohmann::json::parse(read(json), nullptr, false);
    EXPECT_EQ(j.value("error", ""), message) << name << ": " << j.dump();
    EXPECT_EQ(leftovers(), "") << name;
  }
  if (asan)
    ::setenv("ASAN_OPTIONS", saved.c_str(), 1);
  else
    ::unsetenv("ASAN_OPTIONS");
}

// A handler calling a service cannot be judged here: an error that says so
// (exit 2), not a lost_payment verdict for every order.
TEST_F(StressCli, AHandlerThatCallsAServiceIsAnErrorNotAVerdict) {
  const auto o = twice("stress --handler call-in-txn --orders 100 -q");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(o.out,
            "twice: stress: stress mode has no external services: call-in-txn calls Env::call (service warehouse); "
            "test it with `twice run --handler call-in-txn`\n");
  EXPECT_EQ(leftovers(), "");
}

// An outbox handler's relay calls the services from a background job, which
// stress does not run: the run goes on (its database invariants hold), with a
// note that what the job delivers is not judged here.
TEST_F(StressCli, AHandlersBackgroundJobsAreNamedAsNotRun) {
  const auto o = twice("stress --handler outbox --orders 20 -q");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("twice: stress: note: outbox's background jobs (outbox-relay) do not run in stress mode; what "
                       "they deliver is judged by `twice run`\n"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(twice("stress --handler cas --orders 20 -q").out.find("note:"), std::string::npos);
  EXPECT_EQ(leftovers(), "");
}

// SIGTERM and SIGHUP stop a run as Ctrl-C does: the report of what ran is
// printed and written, the exit status is 128 + the signal, and the run's
// database folder is gone.
TEST_F(StressCli, TermAndHupStopTheRunKeepItsReportAndRemoveItsDatabase) {
  for (const auto& [signal, code] : {std::pair{"TERM", 143}, std::pair{"HUP", 129}}) {
    const std::string json = file(fmt::format("{}.json", signal));
    const auto o = script(fmt::format(
        "\"$twice\" stress --handler cas --orders 1000000 --seconds 0 -q --json {} & p=$!\n"
        "i=0; while [ -z \"$(ls \"$TMPDIR\")\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
        "sleep 0.3; kill -{} $p; wait $p",
        json, signal));
    EXPECT_EQ(o.exit_code, code) << signal << ": " << o.out;
    EXPECT_NE(o.out.find("interrupted (1000000 orders planned)"), std::string::npos) << o.out;
    const auto j = nlohmann::json::parse(read(json), nullptr, false);
    EXPECT_EQ(j.value("stopped_by", ""), "interrupted") << j.dump();
    EXPECT_EQ(leftovers(), "") << signal;
  }
}

// A handler that never returns ignores the stop; a second Ctrl-C kills its
// run at once, says what it keeps and drops as `twice run`'s does, and still
// nothing is left behind.
TEST_F(StressCli, ASecondInterruptKillsAHandlerThatNeverReturns) {
  const auto o = script(
      "\"$twice\" stress --plugin \"$plugin\" --handler hostile-spin --orders 50 -q & p=$!\n"
      "i=0; while [ -z \"$(ls \"$TMPDIR\")\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
      "sleep 0.3; kill -INT $p; sleep 0.3; kill -INT $p; wait $p");
  EXPECT_EQ(o.exit_code, 130) << o.out;
  EXPECT_NE(o.out.find("twice: stopping after the round under way"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("twice: stopping now: the 0 finished runs are written; 1 run under way is dropped (Ctrl-C "
                       "again to stop at once, writing nothing)\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("twice: stress: stopped now: the run was killed; its report is lost"), std::string::npos)
      << o.out;
  EXPECT_EQ(leftovers(), "");
}

// A run that fails before any report leaves an existing --json file as it was.
TEST_F(StressCli, AFailedRunLeavesAnExistingJsonFileAlone) {
  const std::string json = file("kept.json");
  std::ofstream(json) << "{\"earlier\": true}\n";
  const auto o = twice(fmt::format("stress --handler call-in-txn --orders 100 -q --json {}", json));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(read(json), "{\"earlier\": true}\n");
  std::string stray;
  for (const auto& e : fs::directory_iterator(fs::path(json).parent_path()))
    if (e.path().filename().string().find(".twice-") != std::string::npos) stray += e.path().string();
  EXPECT_EQ(stray, "");
}

// Numbers out of range, refused before anything starts, naming the option.
TEST_F(StressCli, NumbersOutOfRangeAreOneLineNamingTheOption) {
  const std::pair<std::string, std::string> cases[] = {
      {"--threads abc", "twice: --threads: 'abc' is not a whole number (see twice stress --help)\n"},
      {"--seconds -1",
       "twice: --seconds: -1 is out of range: give 0 (no limit) or 0.000001 to 86400 (see twice stress --help)\n"},
      {"--seconds 1e-9",
       "twice: --seconds: 1e-9 is out of range: give 0 (no limit) or 0.000001 to 86400 (see twice stress --help)\n"},
      {"--seconds nan", "twice: --seconds: 'nan' is not a number of seconds (see twice stress --help)\n"},
      {"--deliveries 10000000 --duplicates 1",
       "twice: stress: --deliveries 10000000 makes 10000000 orders of 1 copies; at most 1000000: lower --deliveries "
       "or raise --duplicates\n"},
      {"--orders 100000000",
       "twice: --orders: Value 100000000 not in range 1 to 1000000 (see twice stress --help)\n"},
      {"--threads 300 --engine postgres",
       "twice: stress: --threads 300 is more than the PostgreSQL server twice starts can serve (max_connections=300; "
       "at most 288 workers): lower --threads, or use --engine-url\n"},
  };
  for (const auto& [args, message] : cases) {
    const auto o = twice("stress --handler cas -q " + args);
    EXPECT_EQ(o.exit_code, 2) << args;
    EXPECT_EQ(o.out, message) << args;
  }
  EXPECT_EQ(leftovers(), "");
}

// The report says what it judged, counts in words that agree with the
// numbers, says when --threads does not split into groups, and never prints
// a handler's name raw.
TEST_F(StressCli, TheReportSaysWhatItJudgedAndReadsRight) {
  auto o = twice("stress --handler unique-key+cas --threads 7 --duplicates 3 --orders 1 -q");
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("twice: stress: --threads 7 in groups of 3 copies: 6 threads deliver\n"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("on 6 threads, 3 copies of each order"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("deliveries   3 (1 order × 3)\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("replies      all 3 acked\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("judged       double_credit, lost_update, lost_payment, wrong_amount (the other invariants need `twice "
                       "run`)\n"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("verdict      no violation in 1 order\n"), std::string::npos) << o.out;
  o = twice("stress --handler \"$(printf 'evil\\033[2J\\nname')\" -q");
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(o.out.find('\033'), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("unknown handler 'evil\\x1b[2J\\nname'"), std::string::npos) << o.out;
}

// An engine that cannot run after another one reported: the report is kept,
// in the text and in the JSON (an array, since two were asked for, with the
// failed engine's error), and the error names the engine.
TEST_F(StressCli, AnEngineThatFailsAfterAnotherReportedKeepsThatReport) {
  const std::string json = file("engines.json");
  const auto o = twice(fmt::format("stress {} --handler hostile-postgres-schema --engine sqlite --engine postgres "
                                   "--threads 2 --orders 20 -q --json {}",
                                   plugin(), json));
  if (o.out.find("cannot start PostgreSQL") != std::string::npos) GTEST_SKIP() << o.out;
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.out.find("verdict      no violation in 20 orders"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("twice: stress on PostgreSQL read-committed: handler hostile-postgres-schema: the handler's "
                       "schema (PostgreSQL setup SQL): "),
            std::string::npos)
      << o.out;
  const auto j = nlohmann::json::parse(read(json), nullptr, false);
  ASSERT_TRUE(j.is_array()) << j.dump();
  ASSERT_EQ(j.size(), 2u) << j.dump();
  EXPECT_EQ(j[0]["orders_run"], 20);
  EXPECT_EQ(j[1]["database"], "PostgreSQL read-committed");
  EXPECT_NE(j[1].value("error", "").find("handler hostile-postgres-schema"), std::string::npos) << j.dump();
  EXPECT_EQ(leftovers(), "");
}

// twice killed while mariadb-install-db runs: the guardian kills the
// install's process group (its mariadbd --bootstrap too) before it removes
// the server's folder, so nothing writes the folder back afterwards and no
// process of it is left.
TEST_F(StressCli, KilledDuringMariadbInstallLeavesNoFolderAndNoProcess) {
  if (::system("command -v mariadb-install-db >/dev/null 2>&1 || test -x /usr/sbin/mariadb-install-db") != 0)
    GTEST_SKIP() << "no mariadb-install-db";
  const auto o = script(
      "m=\"$TMPDIR/m\"; mkdir \"$m\"; export TWICE_MARIADB_DIR=\"$m\"\n"
      "\"$twice\" stress --handler cas --engine mariadb --threads 2 --orders 10 -q >/dev/null 2>&1 & p=$!\n"
      "i=0; while ! pgrep -f \"bootstrap.*$m\" >/dev/null && [ $i -lt 400 ]; do sleep 0.02; i=$((i+1)); done\n"
      "[ $i -lt 400 ] || echo 'no bootstrap seen'\n"
      "kill -KILL $p; wait $p 2>/dev/null\n"
      "i=0; while { [ -n \"$(ls \"$m\")\" ] || pgrep -f \"$m\" >/dev/null; } && [ $i -lt 300 ]; do sleep 0.05; "
      "i=$((i+1)); done\n"
      "sleep 1; echo \"left: [$(ls \"$m\")] processes: [$(pgrep -f \"$m\" | tr '\\n' ' ')]\"\n"
      "rmdir \"$m\"");
  EXPECT_EQ(o.out, "left: [] processes: []\n");
  EXPECT_EQ(leftovers(), "");
}

}  // namespace
