// Which scenarios a check from twice/testing.h runs: Options::bundled and
// Options::scenarios, resolved to references (a bundled name, or an absolute
// path to a .toml file) and loaded. Called by the testing library only.
// Reads files; no shared state, so safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "gateway/scenario.h"
#include "gateway/scenario_ref.h"
#include "twice/testing.h"

namespace twice::testing {

// OK when every name in Options::skip is a bundled scenario, else what is wrong.
Status check_skip(const Options& options);
// OK when every folder in Options::scenarios can be read and has scenario
// files in it, else what is wrong.
Status check_scenario_folders(const Options& options);

}  // namespace twice::testing
