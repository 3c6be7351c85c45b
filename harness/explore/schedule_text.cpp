#include "explore/schedule_text.h"

#include <charconv>

#include <fmt/format.h>

namespace twice::explore {

std::string schedule_text(const std::vector<std::uint64_t>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size();) {
    std::size_t j = i;
    while (j < choices.size() && choices[j] == choices[i]) ++j;
    if (!out.empty()) out += '.';
    out += std::to_string(choices[i]);
    if (j - i > 1) out += fmt::format("x{}", j - i);
    i = j;
  }
  return out.empty() ? "-" : out;  // no choice at all: one task, no fault site
}

StatusOr<std::vector<std::uint64_t>> parse_schedule(std::string_view text) {
  std::vector<std::uint64_t> out;
  if (text == "-") return out;
  constexpr std::uint64_t kMostRepeats = 1'000'000;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('.', start), text.size());
    const std::string_view token = text.substr(start, end - start);
    const std::size_t x = token.find('x');
    std::uint64_t value = 0, times = 1;
    const std::string_view v = token.substr(0, x);
    auto bad = [&] {
      return Status::error(fmt::format(
          "--schedule: '{}' is not a value or VALUExCOUNT (the schedule is printed by `twice run --strategy exhaustive`)",
          token));
    };
    // The whole text a number, and one that fits: an overflow read as 0 (or
    // a count of 1) replayed another schedule.
    auto number = [](std::string_view digits, std::uint64_t& into) {
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), into);
      return !digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size();
    };
    if (!number(v, value)) return bad();
    if (x != std::string_view::npos && (!number(token.substr(x + 1), times) || times == 0 || times > kMostRepeats))
      return bad();
    // The whole schedule too: twenty tokens of a million each took 480 MB
    // before the run could say it makes three choices.
    if (out.size() + times > kMostRepeats)
      return Status::error(fmt::format("--schedule has more than {} choices in all, more than any run makes; replay a "
                                       "schedule as `twice run --strategy exhaustive` printed it",
                                       kMostRepeats));
    out.insert(out.end(), times, value);
    start = end + 1;
  }
  return out;
}

Status check_schedule_fits(const std::vector<std::uint64_t>& given, const std::vector<std::uint64_t>& used) {
  constexpr std::string_view kFix =
      "replay a schedule as `twice run --strategy exhaustive` printed it for this handler and scenario (and the "
      "scenario file as it was then)";
  for (std::size_t i = 0; i < given.size() && i < used.size(); ++i)
    if (given[i] != used[i])
      return Status::error(fmt::format("--schedule: choice {} is {}, but that point of the run has only 0..{}; {}", i + 1,
                                       given[i], used[i], kFix));
  if (given.size() > used.size())
    return Status::error(fmt::format("--schedule has {} choices, but the run made only {}; {}", given.size(),
                                     used.size(), kFix));
  return Status::OK();
}

}  // namespace twice::explore
