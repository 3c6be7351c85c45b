#include "testing/scenario_selection.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace twice::testing {
namespace {

// The scenario files of a folder, sorted; none when it cannot be read.
std::vector<fs::path> files_in(const std::string& dir) {
  StatusOr<std::vector<std::string>> files = gateway::scenario_files(dir);
  if (!files.ok()) return {};
  return {files->begin(), files->end()};
}

// A bundled scenario that requires effects beyond the database ([checks]
// effects) is for handlers that cause them (Options::effects). One that does
// not load stays in, so that running it says why.
bool requires_effects(const fs::path& file) {
  const StatusOr<gateway::Scenario> s = gateway::load_scenario(file.string());
  return s.ok() && !s->required_effects.empty();
}

void add_unique(std::vector<std::string>& refs, std::string ref) {
  if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(std::move(ref));
}

}  // namespace

std::vector<std::string> scenario_refs(const Options& options) {
  std::vector<std::string> refs;
  if (options.bundled) {
    const auto files = files_in(options.bundled_dir);
    // An unreadable bundled folder stays in the list, so that running it says why.
    if (files.empty()) add_unique(refs, options.bundled_dir);
    for (const auto& f : files)
      if (std::find(options.skip.begin(), options.skip.end(), f.stem().string()) == options.skip.end() &&
          (options.effects || !requires_effects(f)))
        add_unique(refs, f.stem().string());
  }
  for (const auto& s : options.scenarios) {
    std::error_code ec;
    if (!gateway::is_scenario_name(s) && fs::is_directory(s, ec)) {
      const auto files = files_in(s);
      // A folder with no scenario file in it stays in the list, so that running it says so.
      if (files.empty()) add_unique(refs, s);
      for (const auto& f : files) add_unique(refs, fs::absolute(f).lexically_normal().string());
    } else if (gateway::is_scenario_name(s)) {
      add_unique(refs, s);
    } else {
      add_unique(refs, fs::absolute(s).lexically_normal().string());
    }
  }
  return refs;
}

Status check_scenario_folders(const Options& options) {
  for (const auto& s : options.scenarios) {
    std::error_code ec;
    if (gateway::is_scenario_name(s) || !fs::is_directory(s, ec)) continue;
    StatusOr<std::vector<std::string>> files = gateway::scenario_files(s);
    if (!files.ok()) return Status::error(fmt::format("Options::scenarios: {}", files.status().message()));
    if (files->empty())
      return Status::error(fmt::format("Options::scenarios names the folder {}, which has no scenario file (*.toml) "
                                       "in it (folders inside it are not searched): name the folder that has them",
                                       s));
  }
  return Status::OK();
}

Status check_skip(const Options& options) {
  for (const auto& name : options.skip) {
    std::error_code ec;
    if (!fs::exists(fs::path(options.bundled_dir) / (name + ".toml"), ec))
      return Status::error(
          fmt::format("Options::skip names '{}', which is not a bundled scenario (in {})", name, options.bundled_dir));
  }
  return Status::OK();
}

}  // namespace twice::testing
