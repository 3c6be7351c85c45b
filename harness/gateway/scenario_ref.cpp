#include "gateway/scenario_ref.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace twice::gateway {

bool is_scenario_name(std::string_view ref) { return ref.find('/') == std::string_view::npos && !ref.ends_with(".toml"); }

std::string scenario_ref_file(const std::string& ref, const std::string& bundled_dir) {
  return is_scenario_name(ref) ? (fs::path(bundled_dir) / (ref + ".toml")).string() : ref;
}

StatusOr<Scenario> load_scenario_ref(const std::string& ref, const std::string& bundled_dir) {
  std::error_code ec;
  if (fs::is_directory(ref, ec)) {
    StatusOr<std::vector<std::string>> files = scenario_files(ref);
    if (files.ok() && files->empty()) return Status::error(fmt::format("{}: no scenario files (*.toml) in this folder", ref));
    return Status::error(fmt::format("{}: a folder, not a scenario file; name one of its .toml files", ref));
  }
  if (!is_scenario_name(ref)) return load_scenario(ref);
  if (bundled_dir.empty())
    return Status::error(fmt::format(
        "scenario '{}': no bundled scenarios folder (set Options::bundled_dir, or link twice::twice, which sets it)", ref));
  const std::string path = scenario_ref_file(ref, bundled_dir);
  if (!fs::exists(path, ec)) {
    std::string names;
    if (StatusOr<std::vector<std::string>> files = scenario_files(bundled_dir); files.ok())
      for (const auto& f : *files) names += (names.empty() ? "" : ", ") + fs::path(f).stem().string();
    return Status::error(fmt::format("unknown scenario '{}'; bundled: {} (or give a path to a .toml file)", ref,
                                     names.empty() ? "none in " + bundled_dir : names));
  }
  StatusOr<Scenario> s = load_scenario(path);
  if (s.ok()) s->source.clear();  // bundled: named by name
  return s;
}

}  // namespace twice::gateway
