// unique_temp_dir(): a fresh folder under the temporary directory, made once
// per test process with mkdtemp() and removed with its contents when the
// process exits. No fixed folder names: two checkouts (or two ctest jobs) on
// one machine never read or delete each other's files. Header-only, so that
// every test binary can use it; not thread-safe on first call (call it from
// the test's own thread).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace twice::testing {

inline const std::filesystem::path& unique_temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string pattern = (std::filesystem::temp_directory_path() / "twice-test-XXXXXX").string();
      if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed under " + pattern);
      path = pattern;
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

}  // namespace twice::testing
