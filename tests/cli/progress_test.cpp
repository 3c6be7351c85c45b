// What `twice run` prints on stderr while it runs, off a terminal (a CI
// log): a line per finished handler, naming the part of the run (the engine
// and isolation level) when it is not the one default; a line a minute for a
// cell that runs longer; and a line whenever a minute passed without one,
// since a server engine's handler of short cells can take many minutes.
#include "cli/progress.h"

#include <string>

#include <gtest/gtest.h>

namespace twice::cli {
namespace {

struct FakeClock {
  double now = 1000;
};

std::string printed(const std::function<void()>& f) {
  ::testing::internal::CaptureStderr();
  f();
  return ::testing::internal::GetCapturedStderr();
}

TEST(Progress, AHandlerLineNamesThePartOfTheRunWhenThereAreSeveral) {
  FakeClock clock;
  Progress plain(false, false, 2, 1, "", [&] { return clock.now; });
  EXPECT_EQ(printed([&] { plain.cell_done("cas", "concurrent-duplicates", true, "pass", 1, 2); }),
            "[1/2 handlers] cas: 1 cell, as expected\n");
  Progress part(false, false, 2, 1, "postgres/read-committed, 2 of 7", [&] { return clock.now; });
  EXPECT_EQ(printed([&] { part.cell_done("cas", "concurrent-duplicates", false, "double_credit", 1, 2); }),
            "[1/2 handlers, postgres/read-committed, 2 of 7] cas: 1 cell, 1 differs from the expected matrix\n");
}

TEST(Progress, AMinuteWithoutALineGetsOneThoughEveryCellIsShort) {
  FakeClock clock;
  Progress p(false, false, 1, 3, "mariadb/repeatable-read", [&] { return clock.now; });
  clock.now += 30;
  EXPECT_EQ(printed([&] { p.cell_done("cas", "a", true, "pass", 1, 3); }), "") << "the handler is not done";
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "exploring", 40, 20); }), "") << "30 s of silence is not a minute";
  clock.now += 31;
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "exploring", 41, 21); }),
            "twice: 1 of 3 cells done (mariadb/repeatable-read); under way: cas × b: exploring, run 41\n");
  clock.now += 10;
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "exploring", 50, 31); }), "") << "a line came 10 s ago";
  // A cell past a minute says so, once a minute, whatever else was printed.
  clock.now += 30;
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "shrinking double_credit", 60, 61); }),
            "twice: cas × b (mariadb/repeatable-read) still running after 1 min: shrinking double_credit, run 60\n");
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "shrinking double_credit", 61, 62); }), "");
}

// A cell's line says how far it is: of the seeds asked, or of an exhaustive
// search's budget; not while shrinking (its run counts another thing).
TEST(Progress, AnExploringLineSaysHowManyRunsThereAreInAll) {
  FakeClock clock;
  Progress p(false, false, 1, 1, "", [&] { return clock.now; });
  p.runs_per_cell(100000, false);
  clock.now += 61;
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "exploring", 43317, 61); }),
            "twice: cas × b still running after 1 min: exploring, run 43317 of 100000\n");
  p.runs_per_cell(20000, true);
  clock.now += 61;
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "exploring", 3678, 122); }),
            "twice: cas × b still running after 2 min: exploring, run 3678 of at most 20000\n");
  clock.now += 61;
  EXPECT_EQ(printed([&] { p.under_way("cas", "b", "shrinking double_credit", 60, 183); }),
            "twice: cas × b still running after 3 min: shrinking double_credit, run 60\n");
}

TEST(Progress, QuietPrintsNothing) {
  FakeClock clock;
  Progress p(false, true, 1, 1, "", [&] { return clock.now; });
  clock.now += 600;
  EXPECT_EQ(printed([&] {
              p.under_way("cas", "b", "exploring", 1, 300);
              p.cell_done("cas", "b", true, "pass", 1, 1);
            }),
            "");
}

}  // namespace
}  // namespace twice::cli
