#include "explore/expected.h"

#include <algorithm>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "check/violation.h"

namespace twice::explore {

namespace {

using Cell = std::pair<std::string, std::string>;

// One handler's table of scenario = "expectation" into `cells`, each cell's
// line into `lines`.
Status read_handler_table(const std::string& path, const std::string& handler, const toml::table& table,
                          std::map<Cell, Expectation>& cells, std::map<Cell, int>& lines) {
  for (auto&& [scenario, value] : table) {
    const auto text = value.value<std::string>();
    if (!text || !value.is_string()) {
      return Status::error(fmt::format("{}:{}: the expectation for {} on {} must be a string: \"pass\" or \"violation: reason\"",
                                       path, value.source().begin.line, handler, scenario.str()));
    }
    Expectation e;
    e.listed = true;
    const auto colon = text->find(':');
    std::string head = text->substr(0, colon);
    if (colon != std::string::npos) {
      e.reason = text->substr(colon + 1);
      e.reason.erase(0, e.reason.find_first_not_of(' '));
    }
    head.erase(head.find_last_not_of(' ') + 1);
    if (head != "pass") {
      for (std::size_t start = 0; start <= head.size();) {
        const auto plus = std::min(head.find('+', start), head.size());
        const std::string name = head.substr(start, plus - start);
        if (!check::is_invariant(name)) {
          std::string names;
          for (const auto& i : check::invariants()) names += (names.empty() ? "" : ", ") + std::string(i.name);
          return Status::error(fmt::format("{}:{}: '{}' is not an invariant; write \"pass\" or one of {} (joined with +)",
                                           path, value.source().begin.line, name, names));
        }
        e.violations.push_back(name);
        start = plus + 1;
      }
      std::sort(e.violations.begin(), e.violations.end());
    }
    const Cell key{handler, std::string(scenario.str())};
    lines[key] = static_cast<int>(scenario.source().begin.line);
    cells[key] = std::move(e);
  }
  return Status::OK();
}

}  // namespace

StatusOr<ExpectedMatrix> ExpectedMatrix::load(const std::string& path) {
  ExpectedMatrix m;
  m.path_ = path;
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return Status::error(fmt::format("{}:{}: not valid TOML: {}", path, e.source().begin.line, e.description()));
  }
  for (auto&& [key, row] : root) {
    const std::string name(key.str());
    const auto* table = row.as_table();
    if (!table) {
      return Status::error(fmt::format("{}:{}: '{}' must be a table of scenario = \"expectation\"; write [\"{}\"]", path,
                                       key.source().begin.line, name, name));
    }
    // [reconciler."<handler>"]: the cells a run with the reconciler changes.
    if (name == kReconcilerSection) {
      for (auto&& [handler, inner] : *table) {
        const auto* cells = inner.as_table();
        if (!cells) {
          return Status::error(fmt::format("{}:{}: '{}.{}' must be a table of scenario = \"expectation\"; write "
                                           "[{}.\"{}\"]",
                                           path, handler.source().begin.line, name, handler.str(), name, handler.str()));
        }
        m.handler_lines_.emplace(std::string(handler.str()), static_cast<int>(handler.source().begin.line));
        if (Status st = read_handler_table(path, std::string(handler.str()), *cells, m.reconciler_cells_, m.lines_);
            !st.ok())
          return st;
      }
      continue;
    }
    m.handler_lines_[name] = static_cast<int>(key.source().begin.line);
    if (Status st = read_handler_table(path, name, *table, m.cells_, m.lines_); !st.ok()) return st;
  }
  return m;
}

Expectation ExpectedMatrix::get(const std::string& handler, const std::string& scenario) const {
  auto it = cells_.find({handler, scenario});
  if (it != cells_.end()) return it->second;
  // A cell on a server engine that is not listed is expected to be what it
  // is on SQLite: only the divergences need a line of their own.
  if (const auto at = scenario.find('@'); at != std::string::npos) return get(handler, scenario.substr(0, at));
  return Expectation{};
}

ExpectedMatrix ExpectedMatrix::with_reconciler() const {
  ExpectedMatrix out = *this;
  for (const auto& [key, e] : reconciler_cells_) {
    // A server engine's cell of the same scenario written for runs without
    // the reconciler no longer says what to expect, unless listed here too.
    if (key.second.find('@') == std::string::npos) {
      const std::string prefix = key.second + "@";
      for (auto it = out.cells_.lower_bound({key.first, prefix}); it != out.cells_.end() && it->first.first == key.first &&
                                                                  it->first.second.starts_with(prefix);)
        it = reconciler_cells_.count(it->first) ? std::next(it) : out.cells_.erase(it);
    }
    out.cells_[key] = e;
  }
  out.reconciler_cells_.clear();
  return out;
}

std::vector<std::pair<std::string, std::string>> ExpectedMatrix::cells() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, e] : cells_) out.push_back(key);
  for (const auto& [key, e] : reconciler_cells_)
    if (!cells_.count(key)) out.push_back(key);
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Status ExpectedMatrix::check_names(const std::vector<std::string>& handlers,
                                   const std::vector<std::string>& scenarios) const {
  for (const auto& [handler, line] : handler_lines_) {
    if (contains(handlers, handler)) continue;
    return Status::error(fmt::format("{}:{}: unknown handler '{}'; known: {} (a plugin's handlers need --plugin)", path_, line,
                        handler, joined(handlers)));
  }
  for (const auto& [key, line] : lines_) {
    // "scenario@engine/isolation" names that scenario's cell on a server engine.
    const std::string scenario = key.second.substr(0, key.second.find('@'));
    if (contains(scenarios, scenario)) continue;
    return Status::error(fmt::format("{}:{}: unknown scenario '{}' for {}; known: {}", path_, line, scenario, key.first,
                        joined(scenarios)));
  }
  return Status::OK();
}

}  // namespace twice::explore
