// The test API contains the handler under test as `twice run` does
// (Options::contain): a handler that calls exit(0) fails its check instead of
// ending the test program green, one that hangs fails it after
// Options::hang_seconds, and one that keeps state across runs is named. Also
// the scenario selections a check refuses (a folder with no scenario file in
// it, two scenarios of one name).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "contains.h"
#include "twice/handler.h"
#include "twice/testing.h"
#include "../unique_temp_dir.h"

namespace {

namespace fs = std::filesystem;
using twice::testing::Options;
using twice::testing::Report;
using twice::testing::contains;

class Exits final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override { std::exit(0); }
};

class Spins final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1;
  }
};

// The reference cas handler for its first 40 deliveries in a process, then
// credits every delivery.
class KeepsState final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static int deliveries = 0;
    if (++deliveries < 40) return cas_->handle(n, env);
    twice::Db& db = env.db();
    const twice::Result order = db.exec("SELECT user_id FROM orders WHERE order_no = ?", {n.out_trade_no});
    if (!order.ok() || order.empty()) return twice::Reply::fail("unknown order");
    const std::string user = order.at(0, "user_id").as_text();
    (void)db.exec("UPDATE orders SET status = 'PAID' WHERE order_no = ?", {n.out_trade_no});
    (void)db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)", {n.out_trade_no, user, n.amount});
    (void)db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", {n.amount, user});
    return twice::Reply::success();
  }

 private:
  std::unique_ptr<twice::Handler> cas_ = twice::HandlerRegistry::instance().find("cas")->make();
};

// Where StartsADaemon writes its daemon's pid (a file named by it), set by
// the test before the check: the contained process inherits it.
std::string g_daemon_pids;

// Starts a daemon once per process (fork, setsid, fork: out of the process's
// group and session, as a helper a handler starts might be), then handles as
// the reference cas.
class StartsADaemon final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static bool started = false;
    if (!started) {
      started = true;
      if (const pid_t child = ::fork(); child == 0) {
        ::setsid();
        if (const pid_t daemon = ::fork(); daemon == 0) {
          ::execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
          ::_exit(127);
        } else if (daemon > 0) {
          std::ofstream(g_daemon_pids + "/" + std::to_string(daemon)).flush();
        }
        ::_exit(0);
      } else if (child > 0) {
        ::waitpid(child, nullptr, 0);
      }
    }
    return cas_->handle(n, env);
  }

 private:
  std::unique_ptr<twice::Handler> cas_ = twice::HandlerRegistry::instance().find("cas")->make();
};

const twice::HandlerInfo kExits{"contained-exits", "calls exit(0)", [] { return std::make_unique<Exits>(); }};
const twice::HandlerInfo kSpins{"contained-spins", "spins without an Env call", [] { return std::make_unique<Spins>(); }};
const twice::HandlerInfo kStartsADaemon{"contained-starts-a-daemon", "starts a daemon (fork, setsid, fork)",
                                        [] { return std::make_unique<StartsADaemon>(); }};
const twice::HandlerInfo kKeepsState{"contained-keeps-state", "keeps a count of deliveries in a static",
                                     [] { return std::make_unique<KeepsState>(); }};

Options alone(std::string scenario, int seeds) {
  Options o;
  o.bundled = false;
  o.scenarios = {std::move(scenario)};
  o.seeds = seeds;
  o.jobs = 1;
  return o;
}

// Were it not contained, the exit(0) would end this test program with status
// 0 before any assertion: ctest would call the test passed.
TEST(Containment, AHandlerThatCallsExitFailsItsCheck) {
  const Report r = twice::testing::check_exactly_once(kExits, alone("sequential-duplicates", 5));
  EXPECT_TRUE(r.contained);
  EXPECT_FALSE(r.passed);
  ASSERT_EQ(r.violations, std::vector<std::string>{"sequential-duplicates: exited: 0"}) << r.message;
  EXPECT_TRUE(contains(r.message, "contained-exits is not exactly-once: 1 scenario that did not finish")) << r.message;
  EXPECT_TRUE(contains(r.message, "(the handler called exit()?) while exploring run 1 (seed ")) << r.message;
  EXPECT_TRUE(contains(r.message, "replay that run:   twice replay --handler contained-exits --scenario "
                                  "sequential-duplicates --seed "))
      << r.message;

  const Report one = twice::testing::check_run(kExits, {"concurrent-duplicates", 7}, alone("", 1));
  EXPECT_TRUE(one.contained);
  EXPECT_FALSE(one.passed);
  EXPECT_EQ(one.violations, std::vector<std::string>{"concurrent-duplicates: exited: 0"}) << one.message;
  EXPECT_TRUE(contains(one.message, "while exploring run 1 (seed 7)")) << one.message;
}

TEST(Containment, AHandlerThatHangsFailsItsCheckAfterHangSeconds) {
  Options o = alone("sequential-duplicates", 5);
  o.hang_seconds = 1;
  const auto started = std::chrono::steady_clock::now();
  const Report r = twice::testing::check_exactly_once(kSpins, o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.violations, std::vector<std::string>{"sequential-duplicates: hung: no scheduling point for 1 s"})
      << r.message;
  // Killed after about a second, not left to spin until ctest's own timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  // Its replay waits as long before calling it hung (twice replay's own is 30 s).
  EXPECT_TRUE(contains(r.message, " --cell-timeout 1\n")) << r.message;
}

// The daemon outlives the check's process group; it is killed when its
// scenario's runs end, and the Report says so (a pass nonetheless).
TEST(Containment, ADaemonTheHandlerLeftIsKilledAndCounted) {
  const fs::path dir = twice::testing::unique_temp_dir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir);
  g_daemon_pids = dir.string();
  const Report r = twice::testing::check_exactly_once(kStartsADaemon, alone("sequential-duplicates", 5));
  EXPECT_TRUE(r.contained);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.processes_left, 1) << r.message;
  EXPECT_TRUE(contains(r.message, "contained-starts-a-daemon: exactly once on 1 scenario × 5 runs (strategy random, "
                                  "seed 1); the handler left 1 process running when its scenario ended "
                                  "(sequential-duplicates 1); twice killed it"))
      << r.message;
  int daemons = 0;
  for (const auto& file : fs::directory_iterator(dir)) {
    ++daemons;
    const pid_t pid = std::stoi(file.path().filename().string());
    EXPECT_NE(::kill(pid, 0), 0) << "the daemon " << pid << " outlived the check";
    ::kill(pid, SIGKILL);  // were it still there
  }
  EXPECT_EQ(daemons, 1);

  // A handler that leaves none: nothing said, nothing counted.
  const Report cas = twice::testing::check_exactly_once("cas", alone("sequential-duplicates", 5));
  EXPECT_EQ(cas.processes_left, 0);
  EXPECT_FALSE(contains(cas.message, "left")) << cas.message;
}

TEST(Containment, AHandlerThatKeepsStateAcrossRunsIsNamed) {
  const Report r = twice::testing::check_exactly_once(kKeepsState, alone("sequential-duplicates", 30));
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "keeps state across runs")) << r.message;
  // Its scenario finished: the count says what the finding is.
  EXPECT_TRUE(contains(r.message, " and 1 violation that a fresh process did not show again on 1 scenario"))
      << r.message;
  EXPECT_FALSE(contains(r.message, "did not finish")) << r.message;
}

// Containment asked for but not possible (another thread runs: a fork would
// not copy it) is said in the message, not only in Report::contained.
TEST(Containment, AContainedCheckWithAnotherThreadRunningSaysItWasNotContained) {
  std::promise<void> done;
  std::thread other([f = done.get_future()]() mutable { f.wait(); });
  const Report r = twice::testing::check_exactly_once("unique-key+cas", alone("sequential-duplicates", 3));
  done.set_value();
  other.join();
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_FALSE(r.contained);
  EXPECT_TRUE(contains(r.message, "; not contained: this program runs other threads, which a fork would not copy"))
      << r.message;
}

// Uncontained, an exit(0) in the handler would end the test program green:
// it ends with status 1 and a line that says why.
TEST(ContainmentDeathTest, AnExitDuringAnUncontainedCheckEndsTheProgramWithOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Options o = alone("sequential-duplicates", 3);
  o.contain = false;
  EXPECT_EXIT((void)twice::testing::check_exactly_once(kExits, o), ::testing::ExitedWithCode(1),
              "exit\\(\\) was called during the uncontained check of contained-exits \\(Report::contained is false\\)");
}

// contain = false (for a debugger) runs in this process, and says so.
TEST(Containment, UncontainedChecksSaySo) {
  Options o = alone("sequential-duplicates", 3);
  o.contain = false;
  const Report r = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_FALSE(r.contained);
  o.contain = true;
  EXPECT_TRUE(twice::testing::check_exactly_once("unique-key+cas", o).contained);
}

TEST(Containment, HangSecondsOutOfRangeIsRefused) {
  Options o = alone("sequential-duplicates", 3);
  o.hang_seconds = 0;
  const Report r = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.message, "Options::hang_seconds is 0; allowed: 1 to 86400");
}

TEST(ScenarioSelection, AFolderWithNoScenarioFileInItIsRefused) {
  const fs::path dir = twice::testing::unique_temp_dir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir / "nested" / "sub");
  fs::copy_file(fs::path(TWICE_BUNDLED_SCENARIOS_DIR) / "sequential-duplicates.toml",
                dir / "nested" / "sub" / "mine.toml");
  Options o;
  o.scenarios = {(dir / "nested").string()};
  o.seeds = 3;
  const Report r = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "which has no scenario file (*.toml) in it (folders inside it are not searched)"))
      << r.message;
  o.scenarios = {(dir / "nested" / "sub").string()};
  o.bundled = false;
  EXPECT_TRUE(twice::testing::check_exactly_once("unique-key+cas", o).passed);
}

TEST(ScenarioSelection, TwoScenariosOfOneNameAreRefused) {
  const fs::path dir = twice::testing::unique_temp_dir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  const fs::path source = fs::path(TWICE_BUNDLED_SCENARIOS_DIR) / "sequential-duplicates.toml";
  fs::copy_file(source, dir / "a" / "dup.toml");
  fs::copy_file(source, dir / "b" / "dup.toml");
  Options o = alone((dir / "a").string(), 3);
  o.scenarios.push_back((dir / "b").string());
  Report r = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "are both named 'dup' (a result is known by its scenario file's name): rename one"))
      << r.message;

  // A file named like a bundled scenario, next to the bundled ones.
  fs::copy_file(source, dir / "b" / "paid-twice.toml");
  o = Options{};
  o.scenarios = {(dir / "b" / "paid-twice.toml").string()};
  r = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "as a bundled scenario is")) << r.message;
  EXPECT_TRUE(contains(r.message, "Options::skip = {\"paid-twice\"}")) << r.message;

  // One file named twice (the folder and the file in it) runs once.
  o = alone((dir / "a").string(), 3);
  o.scenarios.push_back((dir / "a" / "dup.toml").string());
  r = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.runs, 3);
}

}  // namespace
