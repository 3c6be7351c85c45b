#include "cli/help_format.h"

#include <cctype>
#include <string_view>
#include <vector>

// Read by hand rather than with std::regex: GCC 12 warns (maybe-uninitialized,
// an error under -Werror) inside <regex> in the sanitized build.

namespace twice::cli {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The numeric type CLI11 names at s[at] (UINT64, UINT, INT64, INT, FLOAT), or "".
std::string_view type_at(std::string_view s, std::size_t at) {
  for (std::string_view t : {"UINT64", "UINT", "INT64", "INT", "FLOAT"})
    if (s.substr(at, t.size()) == t) return t;
  return {};
}

bool is_64(std::string_view type) { return type.ends_with("64"); }

std::string name(std::string_view type) { return type == "FLOAT" ? "NUM" : "N"; }

// "=100" at s[at] (up to the next space), or "".
std::string_view default_at(std::string_view s, std::size_t at) {
  if (at >= s.size() || s[at] != '=') return {};
  std::size_t end = at + 1;
  while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
  return end > at + 1 ? s.substr(at, end - at) : std::string_view{};
}

}  // namespace

std::string readable_value_label(const std::string& cli11_label) {
  const std::string_view s = cli11_label;
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const bool boundary = i == 0 || !word_char(s[i - 1]);
    const std::string_view first = boundary ? type_at(s, i) : std::string_view{};
    if (first.empty()) {
      out += s[i++];
      continue;
    }
    // A chain of types, "INT:INT:INT" or "UINT:UINT64".
    std::vector<std::string_view> chain{first};
    std::size_t end = i + first.size();
    while (end < s.size() && s[end] == ':') {
      const std::string_view next = type_at(s, end + 1);
      if (next.empty()) break;
      chain.push_back(next);
      end += 1 + next.size();
    }
    // With a range: " in [LO - HI]", its last type naming the value.
    constexpr std::string_view kIn = " in [";
    if (!is_64(chain.back()) && s.substr(end, kIn.size()) == kIn) {
      const std::size_t lo_at = end + kIn.size();
      const std::size_t dash = s.find(" - ", lo_at);
      const std::size_t close = dash == std::string_view::npos ? dash : s.find(']', dash + 3);
      if (close != std::string_view::npos) {
        const std::string_view lo = s.substr(lo_at, dash - lo_at);
        const std::string_view hi = s.substr(dash + 3, close - dash - 3);
        if (!lo.empty() && !hi.empty() && lo.find_first_of(" ]") == std::string_view::npos &&
            hi.find(' ') == std::string_view::npos) {
          const std::string_view given = default_at(s, close + 1);
          out += name(chain.back());
          out += given;
          out += " (" + std::string(lo) + " to " + std::string(hi) + ")";
          i = close + 1 + given.size();
          continue;
        }
      }
    }
    // Without one: the first type names the value.
    const std::string_view given = default_at(s, end);
    out += name(chain.front());
    out += given;
    i = end + given.size();
  }
  return out;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
  return readable_value_label(CLI::Formatter::make_option_opts(option));
}

}  // namespace twice::cli
