// What the benchmarks share: the bundled scenarios, loaded once, and handlers
// looked up by name. Everything here runs outside the timed loops.
#pragma once

#include <string>

#include "gateway/scenario.h"
#include "twice/handler.h"

namespace twice::bench {

// scenarios/<name>.toml of the source tree. Aborts with a message when it is
// missing or invalid: a benchmark without its input measures nothing.
const gateway::Scenario& bundled_scenario(const std::string& name);

// The registered handler `name`, or nullptr (the caller skips with an error).
const HandlerInfo* find_handler(const std::string& name);

}  // namespace twice::bench
