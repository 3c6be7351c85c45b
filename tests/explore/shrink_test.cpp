#include "explore/shrink.h"

#include <numeric>

#include <gtest/gtest.h>

namespace twice::explore {
namespace {

// "Fails" when the sequence holds a value >= 10 somewhere after a value >= 3:
// the minimal failing sequence is {3, 10}.
std::optional<ChoiceSequence> two_step_bug(const ChoiceSequence& c) {
  bool armed = false;
  for (auto v : c) {
    if (armed && v >= 10) return c;
    if (v >= 3) armed = true;
  }
  return std::nullopt;
}

TEST(Shrink, FindsTheMinimalSequenceOfASyntheticBug) {
  const ChoiceSequence start = {5, 0, 7, 99, 1, 4, 12, 0, 8, 250, 3};
  ASSERT_TRUE(two_step_bug(start));
  ShrinkStats stats;
  const auto out = shrink(start, two_step_bug, 10'000, &stats);
  EXPECT_EQ(out, (ChoiceSequence{3, 10}));
  EXPECT_GT(stats.improvements, 0);
}

bool simpler(const ChoiceSequence& a, const ChoiceSequence& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// Every run the shrinker spends goes to a candidate simpler than the best
// failing sequence so far: the budget buys only progress.
TEST(Shrink, RunsOnlyCandidatesSimplerThanTheBestSoFar) {
  ChoiceSequence best = {5, 0, 7, 99, 1, 4, 12, 0, 8, 250, 3};
  int runs = 0, not_simpler = 0;
  auto watched = [&](const ChoiceSequence& c) -> std::optional<ChoiceSequence> {
    ++runs;
    if (!simpler(c, best)) ++not_simpler;
    auto r = two_step_bug(c);
    if (r && simpler(*r, best)) best = *r;
    return r;
  };
  EXPECT_EQ(shrink(best, watched, 10'000), (ChoiceSequence{3, 10}));
  EXPECT_GT(runs, 0);
  EXPECT_EQ(not_simpler, 0);
}

TEST(Shrink, NeverReturnsSomethingLargerOrPassing) {
  const ChoiceSequence start = {3, 10};
  const auto out = shrink(start, two_step_bug, 1000);
  EXPECT_EQ(out, start);
}

TEST(Shrink, StopsAtTheBudget) {
  int runs = 0;
  auto counting = [&](const ChoiceSequence& c) -> std::optional<ChoiceSequence> {
    ++runs;
    return std::accumulate(c.begin(), c.end(), std::uint64_t{0}) >= 100 ? std::optional(c) : std::nullopt;
  };
  ShrinkStats stats;
  shrink(ChoiceSequence(50, 9), counting, 25, &stats);
  EXPECT_EQ(stats.runs, 25);
  EXPECT_EQ(runs, 25);
}

}  // namespace
}  // namespace twice::explore
