#include "gateway/scenario_digest.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace twice::gateway {

namespace {

// A string as the canonical form writes it: quoted, its quotes and
// backslashes escaped, so that no two values write the same text.
void put_string(std::string_view s, std::string& out) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// One line of text for `n`, the same for every spelling of the same values:
// a table's keys sorted, numbers by value (std::to_chars: the shortest form
// that reads back exactly), and each kind of value tagged, so that the
// string "1" and the integer 1 differ.
void put(const toml::node& n, std::string& out) {
  char digits[64];
  switch (n.type()) {
    case toml::node_type::table: {
      const auto& table = *n.as_table();
      std::vector<std::string_view> keys;
      for (const auto& [key, value] : table) keys.push_back(key.str());
      std::sort(keys.begin(), keys.end());
      out += '{';
      for (const std::string_view key : keys) {
        put_string(key, out);
        out += '=';
        put(*table.get(key), out);
        out += ',';
      }
      out += '}';
      return;
    }
    case toml::node_type::array:
      out += '[';
      for (const auto& item : *n.as_array()) {
        put(item, out);
        out += ',';
      }
      out += ']';
      return;
    case toml::node_type::string:
      put_string(n.as_string()->get(), out);
      return;
    case toml::node_type::integer: {
      const auto end = std::to_chars(digits, digits + sizeof digits, n.as_integer()->get()).ptr;
      out += 'i';
      out.append(digits, end);
      return;
    }
    case toml::node_type::floating_point: {
      const auto end = std::to_chars(digits, digits + sizeof digits, n.as_floating_point()->get()).ptr;
      out += 'f';
      out.append(digits, end);
      return;
    }
    case toml::node_type::boolean:
      out += n.as_boolean()->get() ? "true" : "false";
      return;
    default: {
      // Dates and times (no scenario key takes one): toml++ prints them in
      // RFC 3339.
      std::ostringstream text;
      n.visit([&](const auto& v) { text << v; });
      out += 'd';
      out += text.str();
      return;
    }
  }
}

}  // namespace

std::string scenario_digest(const toml::table& root) {
  std::string canonical;
  put(root, canonical);
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const unsigned char c : canonical) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  const auto folded = static_cast<std::uint32_t>(h ^ (h >> 32));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(8, '0');
  for (int i = 0; i < 8; ++i) hex[i] = kHex[(folded >> (28 - 4 * i)) & 0xf];
  return hex;
}

bool is_scenario_digest(const std::string& text) {
  return text.size() == 8 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Status check_scenario_digest(std::string_view file, std::string_view now, std::string_view wanted,
                             std::string_view given_as, std::string_view leave_out) {
  // Hex has no case: a digest copied in capitals (5CC0ECAE) is the same digest.
  std::string lower(wanted);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (wanted.empty() || lower == now) return Status::OK();
  if (!is_scenario_digest(lower))
    return Status::error(fmt::format("{} '{}': want the eight hex digits a printed command gives after "
                                     "--scenario-digest",
                                     given_as, wanted));
  return Status::error(fmt::format(
      "{}: not the scenario this command was printed for (its digest is {} now, the command says {}): the file has "
      "changed since, and the same seed or schedule would replay another run; replay with the scenario file the "
      "report was made from, or {} to replay this file as it is",
      file, now, wanted, leave_out));
}

}  // namespace twice::gateway
