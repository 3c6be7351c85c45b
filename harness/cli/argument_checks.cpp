#include "cli/argument_checks.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace twice::cli {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> nearest_command(const std::string& word, const std::vector<std::string>& commands) {
  std::optional<std::string> best;
  std::size_t best_distance = 3;  // farther than two edits is another word, not a typo
  for (const auto& c : commands) {
    if (const std::size_t d = edit_distance(word, c); d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
        const bool digits = i < text.size() && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i), text.end(),
                                                           [](char c) { return c >= '0' && c <= '9'; });
        return digits ? std::string() : "'" + text + "' is not a whole number";
      },
      "", "whole number");  // no label of its own: the option's type says it (cli/help_format.h)
}

CLI::Validator one_of(std::vector<std::pair<std::string, std::string>> choices) {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : "|") + c.first;
  return CLI::Validator(
      [choices, list](std::string& text) -> std::string {
        for (const auto& [word, value] : choices)
          if (text == word) {
            text = value;
            return {};
          }
        return "'" + text + "' is not one of " + list;
      },
      list, "one of");
}

CLI::Validator seed_number() {
  const std::string largest = std::to_string(kLargestSeed);
  return CLI::Validator(
      [largest](std::string& text) -> std::string {
        const std::string why = "'" + text + "' is not a seed: a seed is a whole number from 0 to " + largest +
                                " (2^53 - 1, so that a JSON reader holds it exactly)";
        if (text.empty() || text.size() > largest.size() ||
            !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return why;
        // As many digits as the largest: no more than it (compared as text).
        if (text.size() == largest.size() && text > largest) return why;
        return {};
      },
      "", "seed");  // labelled SEED by the option's type_name
}

std::optional<std::string> misread_word(int argc, const char* const* argv, const std::vector<std::string>& lists) {
  std::string option;  // the option the next value is of
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    std::string value = word;
    // "-j", "--seed", "--seed=010"; "-5" is a value.
    if (word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1]))) {
      const std::size_t eq = word.find('=');
      option = word.substr(0, eq);
      if (eq == std::string::npos) continue;  // its value is the next word
      value = word.substr(eq + 1);
    }
    const std::size_t sign = value.starts_with('-') || value.starts_with('+') ? 1 : 0;
    const std::string digits = value.substr(sign);
    const bool number = std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (number && digits.size() > 1 && digits[0] == '0')
      return fmt::format("{}: '{}' has a leading zero, which would be read as octal; write {}{}", option, value,
                         value.substr(0, sign), digits.substr(std::min(digits.find_first_not_of('0'), digits.size() - 1)));
    if (std::find(lists.begin(), lists.end(), option) != lists.end() &&
        (value.empty() || value.front() == ',' || value.back() == ',' || value.find(",,") != std::string::npos))
      return fmt::format("{}: an empty name in '{}'; give names separated by single commas, none empty", option, value);
    option.clear();
  }
  return std::nullopt;
}

CLI::Validator path_given() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty path; give a file or folder (is a shell variable unset?)" : "";
      },
      "", "path");
}

Status check_replaceable_file(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return Status::OK();
  return Status::error(fmt::format("{}: the {} would replace it, but it is {}; move it away or choose another path",
                                   path, what, fs::is_directory(st) ? "a folder" : "not a regular file"));
}

}  // namespace twice::cli
