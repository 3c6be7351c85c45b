// The text form of an exhaustive search's schedule (its choice sequence), as
// `twice replay --schedule` takes it: the values joined by '.', a run of k
// equal values written "vxk" ("0x12.1.0x30.2"). Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "twice/status_or.h"

namespace twice::explore {

std::string schedule_text(const std::vector<std::uint64_t>& choices);
// An error naming the first token that is not a value or "vxk".
StatusOr<std::vector<std::uint64_t>> parse_schedule(std::string_view text);
// Whether the schedule `given` fits the run that replayed it, which drew
// `used` (RunResult::choices: a value past a point's choices is taken as its
// last one, a point past the schedule's end takes 0). An error names the first
// value out of range and the choices its point had, or says how many choices
// the run made when `given` has more. A shorter schedule fits: the points past
// its end take 0, as printed schedules assume.
Status check_schedule_fits(const std::vector<std::uint64_t>& given, const std::vector<std::uint64_t>& used);

}  // namespace twice::explore
