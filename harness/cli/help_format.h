// How `twice ... --help` labels an option's value. CLI11 joins the value's
// type with each check's ("--seeds INT:INT:INT in [1 - 10000000]=100",
// "--seed UINT:UINT64=1"); this formatter writes a number as N (NUM when it
// may have a fraction), its default and range after it: "--seeds N=100 (1 to
// 10000000)". Set on the app before its subcommands are added (they copy it).
// No shared state.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace twice::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override;
};

// The label rewrite on its own, for tests: "INT:INT in [1 - 10]=2" -> "N=2 (1 to 10)".
std::string readable_value_label(const std::string& cli11_label);

}  // namespace twice::cli
