#include "cli/plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "api/registration.h"
#include "reports/escape.h"
#include "twice/version.h"

namespace fs = std::filesystem;

namespace twice::cli {
namespace {

using VersionFn = int (*)();

// dlerror() text on one line.
std::string last_dl_error() {
  const char* e = ::dlerror();
  std::string out = e ? e : "unknown error";
  for (char& c : out)
    if (c == '\n') c = ' ';
  return out;
}

}  // namespace

StatusOr<std::vector<std::string>> load_plugin(const std::string& path) {
  std::vector<std::string> handlers;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    // ELOOP, EACCES, ...: say what the system said, not "no such file".
    if (ec && ec != std::errc::no_such_file_or_directory)
      return Status::error(fmt::format("plugin {}: cannot read it: {}", path, ec.message()));
    return Status::error(fmt::format("plugin {}: no such file", path));
  }
  if (fs::is_directory(path, ec)) return Status::error(fmt::format("plugin {}: is a folder, not a shared library", path));
  // dlopen() searches the library path for a name without a slash; a path was meant.
  const std::string absolute = fs::absolute(path, ec).lexically_normal().string();

  env::take_registrations();  // forget the program's own
  // RTLD_NOW: a symbol this twice does not have fails here, before any of the
  // plugin's code (its static registrations) runs.
  void* library = ::dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const std::string why = last_dl_error();
    const bool unresolved = why.find("undefined symbol") != std::string::npos;
    return Status::error(fmt::format("plugin {}: cannot load it: {}{}", path, why,
                       unresolved ? " (built against another twice? rebuild it against this one)" : ""));
  }
  // dlsym() on the handle looks in the plugin and its dependencies only, not in
  // twice itself, which has this symbol too.
  auto version = reinterpret_cast<VersionFn>(::dlsym(library, "twice_plugin_api_version"));
  if (!version) {
    return Status::error(fmt::format("plugin {}: not a twice plugin (no twice_plugin_api_version symbol): build it with "
                       "TWICE_REGISTER_HANDLER, linking the twice::plugin CMake target",
                       path));
  }
  if (const int v = version(); v != TWICE_API_VERSION) {
    return Status::error(fmt::format("plugin {} was built against twice API version {}, but this twice has API version {}: "
                       "rebuild the plugin against this twice",
                       path, v, TWICE_API_VERSION));
  }

  using Record = env::RegistrationRecord;
  using reports::terminal_text;
  int accepted = 0;
  std::vector<std::string> jobs;
  for (const auto& r : env::take_registrations()) {
    const char* kind = r.kind == Record::Kind::kJob ? "job" : "handler";
    std::vector<std::string>& mine = r.kind == Record::Kind::kJob ? jobs : handlers;
    switch (r.refused) {
      case Record::Refused::kVersion:
        return Status::error(fmt::format("plugin {}: a handler registration compiled against twice API version {} was "
                                         "refused (this twice has {}): rebuild every file of the plugin against this "
                                         "twice",
                                         path, r.api_version, TWICE_API_VERSION));
      case Record::Refused::kEmptyName:
        return Status::error(fmt::format("plugin {}: registers a {} with an empty name: give it one", path, kind));
      case Record::Refused::kNameTaken:
        if (std::find(mine.begin(), mine.end(), r.name) != mine.end())
          return Status::error(
              fmt::format("plugin {}: registers the {} '{}' twice: rename one of them", path, kind, terminal_text(r.name)));
        return Status::error(fmt::format("plugin {}: {} '{}' is already registered (by twice or an earlier plugin): "
                                         "rename it",
                                         path, kind, terminal_text(r.name)));
      case Record::Refused::kNo: break;
    }
    mine.push_back(r.name);
    if (r.kind == Record::Kind::kHandler) ++accepted;
  }
  if (accepted == 0) return Status::error(fmt::format("plugin {}: registers no handler (use TWICE_REGISTER_HANDLER)", path));
  return handlers;
}

StatusOr<std::map<std::string, std::string>> load_plugins(const std::vector<std::string>& paths) {
  std::map<std::string, std::string> origin;
  std::map<std::string, std::string> given;  // the file, resolved -> the path as given
  for (const auto& p : paths) {
    // A second dlopen() of one file returns the same handle and registers
    // nothing, which would read as "registers no handler".
    std::error_code ec;
    const std::string file = fs::weakly_canonical(fs::absolute(p, ec), ec).string();
    if (const auto it = given.find(file); it != given.end())
      return Status::error(fmt::format("plugin {} is given twice (also as {}): give each --plugin once", p, it->second));
    given.emplace(file, p);
    StatusOr<std::vector<std::string>> loaded = load_plugin(p);
    if (!loaded.ok()) return loaded.status();
    for (const auto& name : *loaded) origin[name] = p;
  }
  return origin;
}

}  // namespace twice::cli
