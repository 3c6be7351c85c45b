// `twice run --strategy exhaustive` and `twice replay --schedule` end to end:
// the verdict in the terminal and the JSON, a counterexample's printed replay
// command reproducing it byte for byte, and bad input exiting 2 in one line.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unique_temp_dir.h"
#include "run_twice.h"

namespace {

using Output = twice::testing::CliOutput;

using twice::testing::twice;

TEST(ExhaustiveCli, CheckThenActCounterexampleReplaysByteForByte) {
  const std::string json_path = (twice::testing::unique_temp_dir() / "exhaustive-cta.json").string();
  const auto o = twice("run --handler check-then-act --scenario concurrent-duplicates --strategy exhaustive "
                       "--no-report -q --json " + json_path);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("check-then-act × concurrent-duplicates: searched all"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  const auto& cell = j["cells"][0];
  EXPECT_TRUE(cell["exhaustive"]["complete"].get<bool>());
  EXPECT_FALSE(cell["exhaustive"]["proved"].get<bool>());
  nlohmann::json v;
  for (const auto& x : cell["violations"])
    if (x["name"] == "double_credit") v = x;
  ASSERT_FALSE(v.is_null()) << cell.dump(2);
  EXPECT_EQ(v["counterexample"]["preemptions"].get<int>(), 1);
  // docs/report-schema.md, Conventions: no run has a seed here; the fields keep their integer type.
  EXPECT_EQ(v["seed"], 0);
  EXPECT_EQ(j["seeds"], 100);
  EXPECT_EQ(j["base_seed"], 1);
  std::string replay = v["counterexample"]["replay_shrunk"].get<std::string>();
  ASSERT_EQ(replay.rfind("twice replay ", 0), 0u) << replay;
  replay = replay.substr(std::string("twice ").size());
  const auto first = twice(replay, "/dev/null");
  const auto second = twice(replay, "/dev/null");
  EXPECT_EQ(first.exit_code, 1) << first.out;  // it shows a violation
  EXPECT_NE(first.out.find("# verdict: double_credit"), std::string::npos) << first.out;
  EXPECT_EQ(first.out, second.out);
}

TEST(ExhaustiveCli, UniqueKeyCasIsProvedAndTheDefaultJsonHasNoExhaustiveField) {
  const auto o = twice("run --handler unique-key+cas --scenario concurrent-duplicates --strategy exhaustive --no-report");
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("unique-key+cas × concurrent-duplicates: proved: all"), std::string::npos) << o.out;
  const std::string json_path = (twice::testing::unique_temp_dir() / "exhaustive-default.json").string();
  ASSERT_EQ(twice("run --handler unique-key+cas --scenario concurrent-duplicates --seeds 5 --no-report -q --json " +
                  json_path).exit_code, 0);
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  EXPECT_FALSE(j["cells"][0].contains("exhaustive"));
  EXPECT_FALSE(j["cells"][0].contains("distinct_schedules"));
}

// --prove picks the handlers expected to pass the scenario (check-then-act is
// not one of them) and proves them exhaustively.
TEST(ExhaustiveCli, ProveRunsTheHandlersExpectedToPassExhaustively) {
  const std::string json_path = (twice::testing::unique_temp_dir() / "prove.json").string();
  const auto o = twice("run --prove --scenario concurrent-duplicates --no-report --json " + json_path);
  ASSERT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("unique-key+cas × concurrent-duplicates: proved: all"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  bool cas = false;
  for (const auto& cell : j["cells"]) {
    EXPECT_NE(cell["handler"], "check-then-act");
    EXPECT_TRUE(cell.contains("exhaustive")) << cell["handler"];
    EXPECT_TRUE(cell["exhaustive"]["proved"].get<bool>()) << cell["handler"];
    cas = cas || cell["handler"] == "unique-key+cas";
  }
  EXPECT_TRUE(cas);
}

TEST(ExhaustiveCli, BadSchedulesExitTwoWithOneLine) {
  for (const std::string args : {
           "replay --handler check-then-act --scenario concurrent-duplicates --strategy exhaustive",
           "replay --handler check-then-act --scenario concurrent-duplicates --strategy exhaustive --schedule 1.zz",
           "replay --handler check-then-act --scenario concurrent-duplicates --schedule 1.0",
           "replay --handler check-then-act --scenario concurrent-duplicates",
       }) {
    const auto o = twice(args);
    EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.out;
    EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << args << "\n" << o.out;
  }
}

// A schedule that does not fit the run replayed a plausible trace under a
// header that echoed it as if it had run (a value past a point's choices was
// taken as its last, extra values were never read); --seed was ignored.
TEST(ExhaustiveCli, AScheduleThatDoesNotFitTheRunIsRefusedNamingThePosition) {
  const std::string replay = "replay --handler check-then-act --scenario concurrent-duplicates --strategy exhaustive ";
  const struct {
    std::string schedule;
    std::string says;
  } cases[] = {
      {"9x40", "twice: --schedule: choice 1 is 9, but that point of the run has only 0..1; replay a schedule as "
               "`twice run --strategy exhaustive` printed it for this handler and scenario"},
      // A random-strategy counterexample's `choices`, pasted.
      {"200000.0.20001.0.0.1", "twice: --schedule: choice 1 is 200000, but that point of the run has only 0..1; "},
      {"0x400", "twice: --schedule has 400 choices, but the run made only "},
  };
  for (const auto& c : cases) {
    const auto o = twice(replay + "--schedule " + c.schedule);
    EXPECT_EQ(o.exit_code, 2) << c.schedule << "\n" << o.out;
    EXPECT_EQ(o.out.rfind(c.says, 0), 0u) << c.schedule << "\n" << o.out;
    EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
  }
  // A schedule that stops early fits: the points after it take 0, as printed ones assume.
  EXPECT_EQ(twice(replay + "--schedule 0.1", "/dev/null").exit_code, 0);
  const auto seeded = twice(replay + "--schedule 0.1 --seed 1");
  EXPECT_EQ(seeded.exit_code, 2) << seeded.out;
  EXPECT_EQ(seeded.out,
            "twice: --seed does not go with --strategy exhaustive: its --schedule fixes the run; leave --seed out\n");
  const auto pct = twice("replay --handler cas --scenario concurrent-duplicates --seed 1 --pct-depth 3");
  EXPECT_EQ(pct.exit_code, 2) << pct.out;
  EXPECT_EQ(pct.out, "twice: --pct-depth goes with --strategy pct\n");
}

}  // namespace
