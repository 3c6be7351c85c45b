// Plugins: shared libraries built against twice's installed public headers
// (the twice::plugin CMake target), whose TWICE_REGISTER_HANDLER lines add
// handlers to this process's registry, so that `twice run --plugin libmine.so`
// runs a handler without rebuilding twice.
//
// The library's symbols resolve against the `twice` executable itself, which
// exports the public API (ENABLE_EXPORTS): there is one registry, one copy of
// the API's code. A plugin compiled against another TWICE_API_VERSION is
// refused before any of its handlers is used. Plugins are never unloaded.
// Called by main() before a command runs, on the main thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "twice/status_or.h"

namespace twice::cli {

// Loads the plugin at `path` and returns the names of the handlers it
// registered. An error is one line saying what is wrong and what to do
// ("plugin x.so was built against ...").
StatusOr<std::vector<std::string>> load_plugin(const std::string& path);

// Loads each plugin in order; stops at the first failure. Returns the plugin
// (as given in `paths`) each loaded handler came from, by handler name: a
// replay command for such a handler must load it again.
StatusOr<std::map<std::string, std::string>> load_plugins(const std::vector<std::string>& paths);

}  // namespace twice::cli
