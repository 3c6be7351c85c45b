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

#include <string>
#include <vector>

namespace twice::cli {

// Loads the plugin at `path`. Returns an empty string on success and appends
// the names it registered to `handlers`; on failure returns one line saying
// what is wrong and what to do ("plugin x.so was built against ...").
std::string load_plugin(const std::string& path, std::vector<std::string>& handlers);

// Loads each plugin in order; the first failure's message, or empty.
std::string load_plugins(const std::vector<std::string>& paths);

}  // namespace twice::cli
