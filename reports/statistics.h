// Statistics of one matrix cell, computed from the raw counts the explorer
// keeps (results.h), for the Markdown, HTML and JSON reports. Pure functions
// of their arguments, safe from any thread.
//
// - failure rate: failing runs / runs, with a 95% Wilson score interval, which
//   stays meaningful at 0 of n and n of n where the normal approximation
//   collapses to a zero-width interval;
// - schedules to failure: the gaps between consecutive failing run indices
//   (the first gap is the first index), i.e. samples of "how many schedules
//   until the next failure", summarised by their median;
// - for PCT cells, the theoretical lower bound on the probability that one run
//   finds a bug of depth d: 1 / (n * k^(d-1)), n = tasks, k = scheduling
//   points (Burckhardt et al., ASPLOS 2010), to set beside the observed rate.
//
// Under the exhaustive strategy the runs are the schedules of a depth-first
// enumeration, not random draws: the rate only counts the schedules searched
// (`enumerated`), and the interval and the gaps between failures estimate
// nothing. They are still computed, for the JSON report's fields, but the
// reports a person reads show what the search proved instead.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/model.h"

namespace twice::reports {

struct Interval {
  double low = 0.0;
  double high = 1.0;
};

struct CellStatistics {
  int runs = 0;
  int failures = 0;
  double failure_rate = 0.0;                 // 0 when no run was made
  Interval wilson95;                         // [0, 1] when no run was made
  std::vector<int> gaps;                     // schedules between consecutive failures
  std::optional<double> median_schedules;    // none without a failure
  std::optional<int> first_failure;          // 1-based index of the first failing run
  std::optional<int> pct_depth;              // d, for a "pct(d=…)" strategy
  std::optional<double> pct_lower_bound;     // 1/(n*k^(d-1)), when n and k are known
  bool enumerated = false;                   // an exhaustive search's schedules: no sample, no estimate
};

// The 95% two-sided z.
inline constexpr double kZ95 = 1.959963984540054;

Interval wilson_interval(int successes, int trials, double z = kZ95);
// The median of `samples` (mean of the middle two for an even count); none if empty.
std::optional<double> median(std::vector<int> samples);
// d from "pct(d=3)"; none for any other strategy name.
std::optional<int> pct_depth(const std::string& strategy);
// 1/(n*k^(d-1)); none unless n >= 1, k >= 1 and d >= 1.
std::optional<double> pct_lower_bound(int tasks, int steps, int depth);

CellStatistics cell_statistics(const results::CellResult& cell);

// "15.0%", "0.39%", "0.0012%": enough significant digits to compare a rate
// with a bound that may be orders of magnitude smaller.
std::string format_percent(double fraction);

}  // namespace twice::reports
