// `twice list --json`: what `twice list` prints, as one JSON object for tools
// (an editor plugin, a CI script that picks scenarios): the handlers, the
// scenarios of a folder, the invariants, the background jobs and the gateway
// profiles, each with its name and one-line description. docs/report-schema.md
// describes the fields. Called from main's thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gateway/scenario.h"

namespace twice::cli {

// `scenarios` were loaded from `scenarios_dir` (named in the object as given).
nlohmann::json list_as_json(const std::string& scenarios_dir, const std::vector<gateway::Scenario>& scenarios);

}  // namespace twice::cli
