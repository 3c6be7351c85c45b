#include "cli/help_format.h"

#include <regex>

namespace twice::cli {

std::string readable_value_label(const std::string& cli11_label) {
  // A number with a range: its type, each check's type, the range, the default.
  static const std::regex ranged(
      R"(\b(?:(?:U?INT(?:64)?|FLOAT):)*(U?INT|FLOAT) in \[([^\] ]+) - ([^\] ]+)\](=\S+)?)");
  // A number without one ("UINT:UINT64=1" when a check names no type of its own).
  static const std::regex bare(R"(\b(U?INT|FLOAT)(?::(?:U?INT(?:64)?|FLOAT))*(=\S+)?)");
  std::string out;
  std::smatch m;
  std::string rest = cli11_label;
  const auto name = [](const std::string& type) { return type == "FLOAT" ? std::string("NUM") : std::string("N"); };
  while (std::regex_search(rest, m, ranged)) {
    out += m.prefix().str() + name(m[1].str()) + m[4].str() + " (" + m[2].str() + " to " + m[3].str() + ")";
    rest = m.suffix().str();
  }
  out += rest;
  rest = out;
  out.clear();
  while (std::regex_search(rest, m, bare)) {
    out += m.prefix().str() + name(m[1].str()) + m[2].str();
    rest = m.suffix().str();
  }
  return out + rest;
}

std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
  return readable_value_label(CLI::Formatter::make_option_opts(option));
}

}  // namespace twice::cli
