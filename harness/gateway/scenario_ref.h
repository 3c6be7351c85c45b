// A scenario as a person names it, on the command line (--scenario) or in
// twice/testing.h's Options: a bundled scenario's name
// ("concurrent-duplicates", a file in the bundled folder) or a path to a
// .toml file. The one place that tells the two apart and loads either, for
// the CLI and the testing library alike. Reads files; no shared state.
#pragma once

#include <string>
#include <string_view>

#include "gateway/scenario.h"
#include "twice/status_or.h"

namespace twice::gateway {

// True for a bundled scenario's name: no '/' and no ".toml" ending.
bool is_scenario_name(std::string_view ref);

// The file `ref` names: a bundled scenario's in `bundled_dir`, else `ref`.
std::string scenario_ref_file(const std::string& ref, const std::string& bundled_dir);

// Loads `ref`. A bundled scenario comes back with an empty `source`, so that
// its replay command names it by name and works from any folder. An unknown
// name lists the bundled ones; a folder says to name a file in it.
StatusOr<Scenario> load_scenario_ref(const std::string& ref, const std::string& bundled_dir);

}  // namespace twice::gateway
