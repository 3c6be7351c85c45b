#include "sim/choices.h"

#include <gtest/gtest.h>

namespace twice::sim {
namespace {

TEST(Rng, SameSeedSameSequence) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    differs |= x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, BelowStaysInRangeAndCoversIt) {
  Rng r(7);
  std::vector<int> seen(5, 0);
  for (int i = 0; i < 1000; ++i) {
    const auto v = r.below(5);
    ASSERT_LT(v, 5u);
    ++seen[v];
  }
  for (int n : seen) EXPECT_GT(n, 100);
}

TEST(Choices, ReplayingWhatWasDrawnGivesTheSameDraws) {
  Choices fresh(99);
  std::vector<std::uint64_t> drawn;
  for (int i = 1; i < 50; ++i) drawn.push_back(fresh.draw(static_cast<std::uint64_t>(i % 7 + 2)));
  Choices again(fresh.consumed());
  for (int i = 1; i < 50; ++i) EXPECT_EQ(again.draw(static_cast<std::uint64_t>(i % 7 + 2)), drawn[static_cast<std::size_t>(i - 1)]);
}

TEST(Choices, ReplayPastTheEndDrawsZeroAndCapsLargeValues) {
  Choices c(std::vector<std::uint64_t>{7, 1});
  EXPECT_EQ(c.draw(3), 2u);  // 7 capped at n-1
  EXPECT_EQ(c.draw(3), 1u);
  EXPECT_EQ(c.draw(3), 0u);  // past the end
  EXPECT_EQ(c.consumed(), (std::vector<std::uint64_t>{2, 1, 0}));
}

TEST(Choices, ZeroMeansNoFaultAndTheShortestDuration) {
  Choices zeros(std::vector<std::uint64_t>{0, 0});
  EXPECT_FALSE(zeros.chance(0.99));
  EXPECT_EQ(zeros.between(5, 50), 5);
  Choices seeded(1);
  EXPECT_FALSE(seeded.chance(0.0));
  EXPECT_TRUE(seeded.chance(1.0));
  EXPECT_TRUE(seeded.consumed().empty()) << "certain outcomes are not choices";
}

TEST(Choices, ChanceIsTrueForExactlyTheTopFractionOfDraws) {
  // chance(0.25) draws from a million values; the top 250000 of them mean true.
  Choices below(std::vector<std::uint64_t>{749'999});
  EXPECT_FALSE(below.chance(0.25));
  Choices at(std::vector<std::uint64_t>{750'000});
  EXPECT_TRUE(at.chance(0.25));
  Choices top(std::vector<std::uint64_t>{999'999});
  EXPECT_TRUE(top.chance(0.25));
}

TEST(Choices, BetweenReachesBothEnds) {
  Choices hi(std::vector<std::uint64_t>{45, 44});
  EXPECT_EQ(hi.between(5, 50), 50) << "the longest duration is drawable";
  EXPECT_EQ(hi.between(5, 50), 49);
}

TEST(DeriveSeed, DistinctAndBelowTwoToThe53) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const auto s = derive_seed(1, i);
    EXPECT_LT(s, 1ULL << 53);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace twice::sim
