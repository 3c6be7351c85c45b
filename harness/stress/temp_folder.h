// TempFolder: a mkdtemp folder "twice-stress-XXXXXX" under a parent (the
// temporary directory when none is given), removed with everything in it
// when the object goes, however the run ended. Not copyable; one thread.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "twice/status.h"

namespace twice::stress {

class TempFolder {
 public:
  TempFolder() = default;
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }

  Status create(const std::string& parent) {
    std::error_code ec;
    const std::filesystem::path base = parent.empty() ? std::filesystem::temp_directory_path(ec)
                                                      : std::filesystem::path(parent);
    if (ec) return Status::error("no temporary directory: " + ec.message());
    std::string pattern = (base / "twice-stress-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return Status::error(fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
    path_ = pattern;
    return Status::OK();
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace twice::stress
