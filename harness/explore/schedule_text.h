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

}  // namespace twice::explore
