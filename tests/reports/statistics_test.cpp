#include "reports/statistics.h"

#include <gtest/gtest.h>

namespace twice::reports {
namespace {

TEST(Statistics, WilsonIntervalMatchesKnownValues) {
  // 30 of 200: p = 0.15, interval from the closed form (checked with R's prop.test without correction).
  const Interval i = wilson_interval(30, 200);
  EXPECT_NEAR(i.low, 0.10712, 1e-4);
  EXPECT_NEAR(i.high, 0.20606, 1e-4);
  // 0 of n: the lower end is exactly 0 and the upper end is about 3.84/n.
  const Interval zero = wilson_interval(0, 200);
  EXPECT_EQ(zero.low, 0.0);
  EXPECT_NEAR(zero.high, 0.01885, 1e-4);
  const Interval all = wilson_interval(200, 200);
  EXPECT_NEAR(all.low, 1 - 0.01885, 1e-4);
  EXPECT_EQ(all.high, 1.0);
  const Interval none = wilson_interval(0, 0);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_EQ(none.high, 1.0);
}

TEST(Statistics, MedianOfOddAndEvenSamples) {
  EXPECT_FALSE(median({}).has_value());
  EXPECT_EQ(median({7}), 7.0);
  EXPECT_EQ(median({5, 3, 12}), 5.0);
  EXPECT_EQ(median({1, 4, 2, 10}), 3.0);
}

TEST(Statistics, PctDepthIsReadFromTheStrategyName) {
  EXPECT_EQ(pct_depth("pct(d=2)"), 2);
  EXPECT_EQ(pct_depth("pct(d=10)"), 10);
  EXPECT_FALSE(pct_depth("random").has_value());
  EXPECT_FALSE(pct_depth("pct(d=)").has_value());
  EXPECT_FALSE(pct_depth("pct(d=x)").has_value());
  EXPECT_FALSE(pct_depth("pct(d=0)").has_value());
}

TEST(Statistics, PctLowerBound) {
  EXPECT_DOUBLE_EQ(*pct_lower_bound(2, 16, 1), 0.5);
  EXPECT_DOUBLE_EQ(*pct_lower_bound(2, 16, 3), 1.0 / (2 * 256));
  EXPECT_FALSE(pct_lower_bound(0, 16, 2).has_value());
  EXPECT_FALSE(pct_lower_bound(2, 0, 2).has_value());
}

TEST(Statistics, CellStatisticsUseGapsBetweenFailingRuns) {
  results::CellResult c;
  c.strategy = "pct(d=2)";
  c.seeds_run = 100;
  c.failing_runs = 4;
  c.failing_run_indices = {5, 8, 20, 21};
  c.max_tasks = 3;
  c.max_steps = 40;
  const CellStatistics s = cell_statistics(c);
  EXPECT_EQ(s.gaps, (std::vector<int>{5, 3, 12, 1}));
  EXPECT_EQ(s.median_schedules, 4.0);
  EXPECT_EQ(s.first_failure, 5);
  EXPECT_DOUBLE_EQ(s.failure_rate, 0.04);
  EXPECT_EQ(s.pct_depth, 2);
  EXPECT_DOUBLE_EQ(*s.pct_lower_bound, 1.0 / 120);

  results::CellResult never;
  never.strategy = "random";
  never.seeds_run = 50;
  const CellStatistics n = cell_statistics(never);
  EXPECT_FALSE(n.median_schedules.has_value());
  EXPECT_FALSE(n.first_failure.has_value());
  EXPECT_FALSE(n.pct_lower_bound.has_value());
  EXPECT_EQ(n.failure_rate, 0.0);
}

TEST(Statistics, PercentagesKeepTwoSignificantDigitsWhenSmall) {
  EXPECT_EQ(format_percent(0.15), "15.0%");
  EXPECT_EQ(format_percent(0.0385), "3.85%");
  EXPECT_EQ(format_percent(1.0 / 512), "0.20%");
  EXPECT_EQ(format_percent(0.000012), "0.0012%");
  EXPECT_EQ(format_percent(0), "0%");
  EXPECT_EQ(format_percent(1), "100.0%");
}

}  // namespace
}  // namespace twice::reports
