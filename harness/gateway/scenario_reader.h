// The scenario loader's TOML reading: one-line errors naming the file, the
// line, the key and what is allowed, thrown as Invalid and turned into an
// error Status by load_scenario(). Internal to harness/gateway: shared by
// scenario.cpp and the tables read in files of their own
// (scenario_profile.cpp's [gateway]). Single-threaded, as loading is.
#pragma once

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "gateway/scenario.h"
#include "twice/time.h"

namespace twice::gateway::scenario_toml {

// Thrown inside the scenario reader only (scenario*.cpp), turned into an error
// Status by load_scenario().
struct Invalid {
  std::string message;
};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const toml::source_region& where, const std::string& what) const {
    throw Invalid{fmt::format("{}:{}: {}", path_, where.begin.line, what)};
  }

  // Rejects keys not in `allowed`, naming the ones that are.
  void only(const toml::table& table, std::initializer_list<std::string_view> allowed,
            std::string_view where) const {
    for (auto&& [key, value] : table) {
      if (std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end()) continue;
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(key.source(), fmt::format("unknown key '{}' in {}; allowed: {}", key.str(), where, list));
    }
  }

  std::string text(const toml::node& n, std::string_view name) const {
    if (auto v = n.value<std::string>(); v && n.is_string()) return *v;
    fail(n.source(), fmt::format("'{}' must be a string, got {}", name, type_of(n)));
  }

  std::int64_t integer(const toml::node& n, std::string_view name, std::int64_t lo, std::int64_t hi) const {
    if (!n.is_integer()) fail(n.source(), fmt::format("'{}' must be an integer, got {}", name, type_of(n)));
    const auto v = *n.value<std::int64_t>();
    if (v < lo || v > hi) fail(n.source(), fmt::format("'{}' is {}; allowed: {} to {}", name, v, lo, hi));
    return v;
  }

  bool boolean(const toml::node& n, std::string_view name) const {
    if (!n.is_boolean()) fail(n.source(), fmt::format("'{}' must be true or false, got {}", name, type_of(n)));
    return *n.value<bool>();
  }

  const toml::table& table(const toml::node& n, std::string_view name) const {
    const auto* t = n.as_table();
    if (!t) fail(n.source(), fmt::format("'{}' must be a table: write [{}]", name, name));
    return *t;
  }

  double probability(const toml::node& n, std::string_view name) const {
    if (!n.is_number()) fail(n.source(), fmt::format("'{}' must be a number from 0 to 1, got {}", name, type_of(n)));
    const double v = *n.value<double>();
    if (!(v >= 0.0 && v <= 1.0))
      fail(n.source(), fmt::format("'{}' is {}; a probability must be from 0 to 1", name, v));
    return v;
  }

  Micros duration(const toml::node& n, std::string_view name) const {
    const std::string s = text(n, name);
    auto d = parse_duration(s);
    if (!d && looks_like_duration(s))
      fail(n.source(), fmt::format("'{}' is \"{}\", longer than any run can be; durations are at most {}", name, s,
                                   format_duration(kMaxDuration)));
    if (!d) fail(n.source(), fmt::format("'{}' is \"{}\", not a duration; write e.g. \"250ms\", \"15s\", \"3m\", \"1h30m\" (units from the largest down, each once)", name, s));
    if (*d > kMaxDuration)
      fail(n.source(), fmt::format("'{}' is \"{}\"; durations are at most {} (docs/scenarios.md)", name, s,
                                   format_duration(kMaxDuration)));
    return *d;
  }

  // Digits and units, as parse_duration() reads them: text it refused only for its size.
  static bool looks_like_duration(std::string_view s) {
    if (s.empty()) return false;
    static constexpr std::string_view kUnits[] = {"d", "h", "m", "s", "ms", "us"};  // largest first
    std::size_t i = 0;
    std::size_t next_unit = 0;  // units go from the largest down, each once
    while (i < s.size()) {
      const std::size_t digits = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      const std::size_t unit = i;
      while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      const std::string_view u = s.substr(unit, i - unit);
      if (unit == digits) return false;
      const auto* at = std::find(std::begin(kUnits) + static_cast<std::ptrdiff_t>(next_unit), std::end(kUnits), u);
      if (at == std::end(kUnits)) return false;
      next_unit = static_cast<std::size_t>(at - std::begin(kUnits)) + 1;
    }
    return true;
  }

  // ["5ms", "50ms"]: a range of durations, lo <= hi.
  std::pair<Micros, Micros> duration_range(const toml::node& n, std::string_view name) const {
    const auto* arr = n.as_array();
    if (!arr || arr->size() != 2)
      fail(n.source(), fmt::format("'{}' must be a pair of durations like [\"5ms\", \"50ms\"]", name));
    const Micros lo = duration(*arr->get(0), name);
    const Micros hi = duration(*arr->get(1), name);
    if (lo > hi) fail(n.source(), fmt::format("'{}': the first duration must not exceed the second", name));
    return {lo, hi};
  }

  static std::string type_of(const toml::node& n) {
    switch (n.type()) {
      case toml::node_type::string: return "a string";
      case toml::node_type::integer: return "an integer";
      case toml::node_type::floating_point: return "a number";
      case toml::node_type::boolean: return "a boolean";
      case toml::node_type::array: return "an array";
      case toml::node_type::table: return "a table";
      default: return "a date or time";
    }
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The tables read in files of their own. [gateway] (scenario_profile.cpp):
// into s.gateway, before [faults], whose max_attempts it bounds.
void read_gateway(const Reader& r, const toml::node& node, Scenario& s);
// `timeout` or `retry_intervals` in table `t` (`where`: "[faults]"), a
// natural slip, is refused with where they go.
void refuse_gateway_keys(const Reader& r, const toml::table& t, std::string_view where);

}  // namespace twice::gateway::scenario_toml
