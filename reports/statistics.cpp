#include "statistics.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace twice::reports {

Interval wilson_interval(int successes, int trials, double z) {
  if (trials <= 0) return {0.0, 1.0};
  const double n = trials;
  const double p = std::clamp(successes / n, 0.0, 1.0);
  const double z2 = z * z;
  const double denominator = 1.0 + z2 / n;
  const double centre = (p + z2 / (2.0 * n)) / denominator;
  const double half = z * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator;
  // At p = 0 or 1 the bound is exactly 0 or 1; rounding would leave 1e-18.
  return {successes <= 0 ? 0.0 : std::clamp(centre - half, 0.0, 1.0),
          successes >= trials ? 1.0 : std::clamp(centre + half, 0.0, 1.0)};
}

std::optional<double> median(std::vector<int> samples) {
  if (samples.empty()) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  const std::size_t mid = samples.size() / 2;
  if (samples.size() % 2 == 1) return samples[mid];
  return (samples[mid - 1] + static_cast<double>(samples[mid])) / 2.0;
}

std::optional<int> pct_depth(const std::string& strategy) {
  constexpr std::string_view prefix = "pct(d=";
  if (!strategy.starts_with(prefix) || !strategy.ends_with(")")) return std::nullopt;
  const std::string digits = strategy.substr(prefix.size(), strategy.size() - prefix.size() - 1);
  if (digits.empty() || digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; }))
    return std::nullopt;
  const int d = std::stoi(digits);
  return d >= 1 ? std::optional<int>(d) : std::nullopt;
}

std::optional<double> pct_lower_bound(int tasks, int steps, int depth) {
  if (tasks < 1 || steps < 1 || depth < 1) return std::nullopt;
  return 1.0 / (tasks * std::pow(static_cast<double>(steps), depth - 1));
}

CellStatistics cell_statistics(const results::CellResult& cell) {
  CellStatistics s;
  s.runs = cell.seeds_run;
  s.failures = cell.failing_runs;
  s.failure_rate = s.runs > 0 ? static_cast<double>(s.failures) / s.runs : 0.0;
  s.wilson95 = wilson_interval(s.failures, s.runs);
  int previous = 0;
  for (int index : cell.failing_run_indices) {
    s.gaps.push_back(index - previous);
    previous = index;
  }
  s.median_schedules = median(s.gaps);
  if (!cell.failing_run_indices.empty()) s.first_failure = cell.failing_run_indices.front();
  s.enumerated = cell.exhaustive.has_value();
  s.pct_depth = pct_depth(cell.strategy);
  if (s.pct_depth) s.pct_lower_bound = pct_lower_bound(cell.max_tasks, cell.max_steps, *s.pct_depth);
  return s;
}

std::string format_percent(double fraction) {
  const double percent = fraction * 100.0;
  if (percent == 0.0) return "0%";
  if (percent >= 10.0) return fmt::format("{:.1f}%", percent);
  if (percent >= 1.0) return fmt::format("{:.2f}%", percent);
  // Two significant digits for small values: 0.39%, 0.0012%.
  const int decimals = std::min(12, 1 - static_cast<int>(std::floor(std::log10(percent))));
  return fmt::format("{:.{}f}%", percent, decimals);
}

}  // namespace twice::reports
