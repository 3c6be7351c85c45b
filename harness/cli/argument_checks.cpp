#include "cli/argument_checks.h"

#include <algorithm>

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

}  // namespace twice::cli
