// A scenario file's digest: eight hex digits that a printed replay command
// carries (`--scenario-digest`), so that `twice replay` can tell when the file
// it reads is not the one the seed was found on. A seed fixes the run's
// choices, not the scenario: an edited file (or a bundled scenario changed by
// an upgrade) replays another run under the same command, silently, and a
// reviewer reading a pull request's counterexample would see a different story.
//
// The digest is of the file's values, not its bytes: comments, blank lines,
// spacing, the order of keys within a table and how a number of one kind is
// spelled (1e3 or 1000.0, 12_000 or 12000) do not count; any value, key, table
// or array entry does. The integer 1 and the float 1.0 are two values, and so
// are -0.0 and 0.0: writing them alike would change the digest of every
// bundled scenario that writes a probability as 1.0, and break every replay
// command printed for them. Two spellings of one duration ("5s", "5000ms")
// are two values here.
#pragma once

#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "twice/status.h"

namespace twice::gateway {

// Eight lowercase hex digits (32 bits of FNV-1a 64 over a canonical form of
// `root`): stable across runs, builds and machines.
std::string scenario_digest(const toml::table& root);

// True when `text` is what scenario_digest() makes: eight lowercase hex digits.
bool is_scenario_digest(const std::string& text);

// Whether a run found on a scenario file of digest `wanted` may be played
// again on `file`, whose digest is `now`. `wanted` comes from a printed
// command's --scenario-digest (`twice replay`, black-box mode's repeat
// command) or twice/testing.h's Run::scenario_digest, and `given_as` names it
// that way, in either case. OK when it may, or `wanted` is empty; else a one-line error: a
// malformed `wanted`, or the file and both digests, ending with `leave_out`,
// how to play the file as it is ("leave out --scenario-digest").
Status check_scenario_digest(std::string_view file, std::string_view now, std::string_view wanted,
                             std::string_view given_as, std::string_view leave_out);

}  // namespace twice::gateway
