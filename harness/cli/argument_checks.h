// Command-line words checked before CLI11 sees them, so that a mistake gets
// a sentence that says what is wrong: a misspelt subcommand suggests the
// nearest one, a number that is not a number says so (CLI11's own range
// check calls "abc" out of range). Pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "twice/status.h"

namespace twice::cli {

// The known subcommand nearest to `word` (at most two edits away), if any.
std::optional<std::string> nearest_command(const std::string& word, const std::vector<std::string>& commands);

// Accepts a whole decimal number (optionally signed); its message names the
// text given: "'abc' is not a whole number". Put it before a CLI::Range.
CLI::Validator whole_number();

// One of the words of `choices`, spelt exactly, which becomes its value (what
// CLI11 then converts: an enum's number); its message lists the words: "'x' is
// not one of auto|always|never" (CLI11's CheckedTransformer prints its map).
CLI::Validator one_of(std::vector<std::pair<std::string, std::string>> choices);

// The largest seed: 2^53 - 1, as every run's derived seed is (sim::derive_seed),
// so that the reports' JSON numbers hold seeds exactly in any reader.
inline constexpr std::uint64_t kLargestSeed = (std::uint64_t{1} << 53) - 1;

// A seed as `twice run` prints them: 0 to kLargestSeed, decimal digits only
// (no sign: "-5" would wrap around to another seed).
CLI::Validator seed_number();

// A word of the command line CLI11 would misread, and what to say of it,
// naming the option it is the value of:
// - a number with a leading zero ("--seed 010"), which CLI11 reads as octal
//   (seed 8: another run replayed without a word);
// - an empty item in the value of one of `lists`, the options that take a
//   comma-separated list ("--scenario ,", "--handler a,,b", "--format="):
//   CLI11 drops it, and an option left with none took the next word
//   ("unknown scenario '--handler'").
std::optional<std::string> misread_word(int argc, const char* const* argv, const std::vector<std::string>& lists);

// A path that is not empty: `--json "$OUT"` with OUT unset would otherwise
// write nothing and exit 0, as if no report had been asked for.
CLI::Validator path_given();

// A report's path that a writer may replace: nothing there yet, or a regular
// file. A folder, a device (/dev/full), a FIFO, a socket or a symbolic link
// is refused before the run, naming the path and `what` ("JSON report"): the
// writer's rename() would put the report in place of it.
Status check_replaceable_file(const std::string& path, const std::string& what);

}  // namespace twice::cli
