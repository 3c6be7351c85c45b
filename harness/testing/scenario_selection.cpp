#include "testing/scenario_selection.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace twice::testing {
namespace {

bool is_name(const std::string& ref) { return ref.find('/') == std::string::npos && !ref.ends_with(".toml"); }

// The scenario files of a folder (every *.toml but expected.toml), sorted.
std::vector<fs::path> scenario_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml" && entry.path().filename() != "expected.toml") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A bundled scenario that requires effects beyond the database ([checks]
// effects) is for handlers that cause them (Options::effects). One that does
// not load stays in, so that running it says why.
bool requires_effects(const fs::path& file) {
  gateway::Scenario s;
  gateway::ScenarioError error;
  return gateway::load_scenario(file.string(), s, error) && !s.required_effects.empty();
}

void add_unique(std::vector<std::string>& refs, std::string ref) {
  if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(std::move(ref));
}

}  // namespace

std::vector<std::string> scenario_refs(const Options& options) {
  std::vector<std::string> refs;
  if (options.bundled) {
    const auto files = scenario_files(options.bundled_dir);
    // An unreadable bundled folder stays in the list, so that running it says why.
    if (files.empty()) add_unique(refs, options.bundled_dir);
    for (const auto& f : files)
      if (std::find(options.skip.begin(), options.skip.end(), f.stem().string()) == options.skip.end() &&
          (options.effects || !requires_effects(f)))
        add_unique(refs, f.stem().string());
  }
  for (const auto& s : options.scenarios) {
    std::error_code ec;
    if (!is_name(s) && fs::is_directory(s, ec)) {
      for (const auto& f : scenario_files(s)) add_unique(refs, fs::absolute(f).lexically_normal().string());
    } else if (is_name(s)) {
      add_unique(refs, s);
    } else {
      add_unique(refs, fs::absolute(s).lexically_normal().string());
    }
  }
  return refs;
}

std::string check_skip(const Options& options) {
  for (const auto& name : options.skip) {
    std::error_code ec;
    if (!fs::exists(fs::path(options.bundled_dir) / (name + ".toml"), ec))
      return fmt::format("Options::skip names '{}', which is not a bundled scenario (in {})", name, options.bundled_dir);
  }
  return "";
}

bool load_scenario_ref(const std::string& ref, const std::string& bundled_dir, gateway::Scenario& out,
                       std::string& error) {
  std::error_code ec;
  if (fs::is_directory(ref, ec)) {
    error = fmt::format("{}: no scenario files (*.toml) in this folder", ref);
    return false;
  }
  gateway::ScenarioError err;
  if (is_name(ref)) {
    if (bundled_dir.empty()) {
      error = fmt::format("scenario '{}': no bundled scenarios folder (set Options::bundled_dir, or link twice::twice, "
                          "which sets it)", ref);
      return false;
    }
    const std::string path = (fs::path(bundled_dir) / (ref + ".toml")).string();
    if (!fs::exists(path)) {
      error = fmt::format("scenario '{}': no {}; give a bundled scenario's name or a path to a .toml file", ref, path);
      return false;
    }
    if (!gateway::load_scenario(path, out, err)) {
      error = err.message;
      return false;
    }
    out.source.clear();  // bundled: named by name
    return true;
  }
  if (!gateway::load_scenario(ref, out, err)) {
    error = err.message;
    return false;
  }
  return true;
}

}  // namespace twice::testing
