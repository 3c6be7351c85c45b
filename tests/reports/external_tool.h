// Running the real consumers of the reports (Chromium, cmark-gfm, xmllint,
// python3, node) from a test. A test whose consumer is not installed skips
// with the package to install; scripts/ or CI install them.
#pragma once

#include <filesystem>
#include <string>

namespace twice::reports::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout; redirect stderr in the command to keep it
};

// Runs `command` with /bin/sh and collects its stdout.
CommandResult run_command(const std::string& command);
// The absolute path of `program` on PATH, or "".
std::string find_program(const std::string& program);
// Single-quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// A fresh folder under the system temp dir, removed when this goes away.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& content);
// Occurrences of `needle` in `haystack`.
int count(const std::string& haystack, const std::string& needle);

// The folder of this test's sources (scripts, schema, the Mermaid checker).
std::filesystem::path test_source_dir();

}  // namespace twice::reports::testing
