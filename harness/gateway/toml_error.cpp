#include "gateway/toml_error.h"

#include <fstream>

#include <fmt/format.h>

namespace twice::gateway {
namespace {

// The key of line `line` (1-based) of `path`: the text before '=', trimmed,
// unquoted, shown in printable ASCII only; "" when the line has none.
std::string key_on_line(const std::string& path, std::size_t line) {
  std::ifstream in(path);
  std::string text;
  for (std::size_t n = 0; n < line && std::getline(in, text); ++n) {
  }
  const std::size_t eq = text.find('=');
  if (!in && text.empty()) return {};
  if (eq == std::string::npos) return {};
  std::string key = text.substr(0, eq);
  const auto first = key.find_first_not_of(" \t");
  const auto last = key.find_last_not_of(" \t");
  if (first == std::string::npos) return {};
  key = key.substr(first, last - first + 1);
  if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
    key = key.substr(1, key.size() - 2);
  std::string shown;
  for (const char c : key) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return shown;
}

}  // namespace

std::string toml_error_text(const std::string& path, const toml::parse_error& e) {
  const std::size_t line = e.source().begin.line;
  std::string what(e.description());
  if (what.find("cannot redefine existing") != std::string::npos) {
    const std::string key = key_on_line(path, line);
    what = key.empty() ? std::string("a key is given twice in its table: keep one")
                       : fmt::format("the key '{}' is given twice in its table: keep one", key);
  }
  return fmt::format("{}:{}: not valid TOML: {}", path, line, what);
}

}  // namespace twice::gateway
