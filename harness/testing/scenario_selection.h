// Which scenarios a check from twice/testing.h runs: Options::bundled and
// Options::scenarios, resolved to references (a bundled name, or an absolute
// path to a .toml file) and loaded. Called by the testing library only.
// Reads files; no shared state, so safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "gateway/scenario.h"
#include "twice/testing.h"

namespace twice::testing {

// Empty when every name in Options::skip is a bundled scenario, else what is wrong.
std::string check_skip(const Options& options);

// A bundled scenario is referred to by name, so that its replay command reads
// like the CLI's ("--scenario concurrent-duplicates"); anything else by its
// absolute path, so that the command works from any folder.
bool load_scenario_ref(const std::string& ref, const std::string& bundled_dir, gateway::Scenario& out,
                       std::string& error);

}  // namespace twice::testing
