// Virtual time. Everything in a run is measured on the simulated clock, in
// microseconds since the start of the run; no handler ever sees wall-clock time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace twice {

using Micros = std::int64_t;

constexpr Micros kMillisecond = 1000;
constexpr Micros kSecond = 1000 * kMillisecond;
constexpr Micros kMinute = 60 * kSecond;
constexpr Micros kHour = 60 * kMinute;

// "0.250s", "15.000s", "3h00m05.000s": fixed width per magnitude, for traces.
std::string format_time(Micros t);
// "250ms", "15s", "3m", "1h30m": the shortest exact form, for reports and errors.
std::string format_duration(Micros d);
// Parses "250ms", "15s", "3m", "6h", "1h30m", "1d", "500us". Nullopt on anything
// else, and on a duration too long for Micros (about 292,000 years).
std::optional<Micros> parse_duration(std::string_view text);

}  // namespace twice
