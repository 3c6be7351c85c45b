#include "explore/expected.h"

#include <algorithm>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "check/violation.h"
#include "engine/isolation.h"
#include "gateway/toml_error.h"
#include "twice/engine.h"

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
          return Status::error(fmt::format("{}:{}: '{}' is not an invariant; write \"pass\" or one of {} (joined with +)",
                                           path, value.source().begin.line, name, check::invariant_names()));
        }
        // A run shows each invariant once: a cell listing one twice could never match.
        if (std::find(e.violations.begin(), e.violations.end(), name) != e.violations.end())
          return Status::error(fmt::format("{}:{}: {} is listed twice; list each invariant once", path,
                                           value.source().begin.line, name));
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

// One [proved."<handler>"] table: scenario = { preemption-bound = K | "none", max-faults = F }.
Status read_proved_table(const std::string& path, const std::string& handler, const toml::table& table,
                         std::map<Cell, results::ProofRequirement>& proved, std::map<Cell, int>& lines) {
  for (auto&& [scenario, value] : table) {
    const auto line = value.source().begin.line;
    const std::string where = fmt::format("{}:{}: the proof required of {} on {}", path, line, handler, scenario.str());
    const std::string shape = "write { preemption-bound = 2, max-faults = 1 } (preemption-bound may be \"none\")";
    const auto* fields = value.as_table();
    if (!fields) return Status::error(fmt::format("{} must be a table; {}", where, shape));
    if (scenario.str().find('@') != std::string_view::npos)
      return Status::error(fmt::format("{}: only SQLite cells can be required proved (the reduction runs on SQLite only); "
                                       "write the scenario's name alone",
                                       where));
    results::ProofRequirement r;
    bool has_bound = false, has_faults = false;
    for (auto&& [key, field] : *fields) {
      if (key == "preemption-bound") {
        has_bound = true;
        if (field.is_string() && *field.value<std::string>() == "none") {
          r.preemption_bound = -1;
        } else if (field.is_integer() && *field.value<std::int64_t>() >= 0 && *field.value<std::int64_t>() <= 64) {
          r.preemption_bound = static_cast<int>(*field.value<std::int64_t>());
        } else {
          return Status::error(fmt::format("{}: preemption-bound must be a whole number from 0 to 64 or \"none\"", where));
        }
      } else if (key == "max-faults") {
        has_faults = true;
        if (!field.is_integer() || *field.value<std::int64_t>() < 0 || *field.value<std::int64_t>() > 64)
          return Status::error(fmt::format("{}: max-faults must be a whole number from 0 to 64", where));
        r.max_faults = static_cast<int>(*field.value<std::int64_t>());
      } else {
        return Status::error(fmt::format("{}: unknown field '{}'; {}", where, key.str(), shape));
      }
    }
    if (!has_bound || !has_faults)
      return Status::error(fmt::format("{}: {} is missing; {}", where, has_bound ? "max-faults" : "preemption-bound", shape));
    const Cell key{handler, std::string(scenario.str())};
    lines[key] = static_cast<int>(scenario.source().begin.line);
    proved[key] = r;
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
    return Status::error(gateway::toml_error_text(path, e));
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
    // [proved."<handler>"]: the cells an exhaustive run must prove.
    if (name == kProvedSection) {
      for (auto&& [handler, inner] : *table) {
        const auto* cells = inner.as_table();
        if (!cells) {
          return Status::error(fmt::format("{}:{}: '{}.{}' must be a table of scenario = {{ preemption-bound = 2, "
                                           "max-faults = 1 }}; write [{}.\"{}\"]",
                                           path, handler.source().begin.line, name, handler.str(), name, handler.str()));
        }
        m.handler_lines_.emplace(std::string(handler.str()), static_cast<int>(handler.source().begin.line));
        if (Status st = read_proved_table(path, std::string(handler.str()), *cells, m.proved_, m.proved_lines_); !st.ok())
          return st;
      }
      continue;
    }
    // [reconcilr."cas"]: a handler's table holds strings, so a table of
    // tables is a section's name misspelt, not a handler.
    for (auto&& [inner, value] : *table) {
      if (!value.is_table()) continue;
      return Status::error(fmt::format("{}:{}: [{}.\"{}\"]: '{}' is no section of the expected matrix; the sections "
                                       "are [{}.\"<handler>\"] and [{}.\"<handler>\"], a handler's own table is "
                                       "[\"<handler>\"]",
                                       path, inner.source().begin.line, name, inner.str(), name, kReconcilerSection,
                                       kProvedSection));
    }
    m.handler_lines_[name] = static_cast<int>(key.source().begin.line);
    if (Status st = read_handler_table(path, name, *table, m.cells_, m.lines_); !st.ok()) return st;
  }
  // A proof is of a cell that holds: one listed with violations to show cannot be both.
  for (const auto& [cell, requirement] : m.proved_) {
    const auto it = m.cells_.find(cell);
    if (it == m.cells_.end() || it->second.violations.empty()) continue;
    std::string shows;
    for (const auto& v : it->second.violations) shows += (shows.empty() ? "" : "+") + v;
    return Status::error(fmt::format("{}:{}: {} on {} is required proved but expected to show {} (line {}); a cell "
                                     "required proved must be expected to pass: remove one of the two",
                                     path, m.proved_lines_.at(cell), cell.first, cell.second, shows, m.lines_.at(cell)));
  }
  return m;
}

Expectation ExpectedMatrix::get(const std::string& handler, const std::string& scenario) const {
  auto it = cells_.find({handler, scenario});
  if (it != cells_.end()) {
    Expectation e = it->second;
    if (auto p = proved_.find({handler, scenario}); p != proved_.end()) e.proved = p->second;
    return e;
  }
  // A cell on a server engine that is not listed is expected to be what it
  // is on SQLite: only the divergences need a line of their own. A proof
  // required on SQLite is not carried over.
  if (const auto at = scenario.find('@'); at != std::string::npos) {
    Expectation e = get(handler, scenario.substr(0, at));
    e.proved.reset();
    return e;
  }
  Expectation e;
  if (auto p = proved_.find({handler, scenario}); p != proved_.end()) e.proved = p->second;
  return e;
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
  out.proved_.clear();
  return out;
}

namespace {

bool of_scenario(const std::pair<std::string, std::string>& cell, const std::string& scenario) {
  return cell.second == scenario || cell.second.starts_with(scenario + "@");
}

}  // namespace

bool ExpectedMatrix::names_scenario(const std::string& scenario) const {
  for (const auto& key : cells())
    if (of_scenario(key, scenario)) return true;
  return false;
}

ExpectedMatrix ExpectedMatrix::without_scenario(const std::string& scenario) const {
  ExpectedMatrix out = *this;
  std::erase_if(out.cells_, [&](const auto& kv) { return of_scenario(kv.first, scenario); });
  std::erase_if(out.reconciler_cells_, [&](const auto& kv) { return of_scenario(kv.first, scenario); });
  std::erase_if(out.proved_, [&](const auto& kv) { return of_scenario(kv.first, scenario); });
  return out;
}

std::vector<std::pair<std::string, std::string>> ExpectedMatrix::cells() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, e] : cells_) out.push_back(key);
  for (const auto& [key, e] : reconciler_cells_)
    if (!cells_.count(key)) out.push_back(key);
  for (const auto& [key, p] : proved_)
    if (!cells_.count(key) && !reconciler_cells_.count(key)) out.push_back(key);
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

namespace {

// What is wrong with the part of a cell's name after '@' ("postgres/read-committed"); "" when nothing.
std::string cell_suffix_error(const std::string& suffix) {
  const std::size_t slash = suffix.find('/');
  const std::string engine = suffix.substr(0, slash);
  const std::string levels = "read-committed, repeatable-read, serializable";
  if (engine == "sqlite") return "a SQLite cell is named without '@...': write the scenario's name alone";
  if (engine != engine_name(Engine::kPostgres) && engine != engine_name(Engine::kMariadb))
    return fmt::format("unknown engine '{}'; a cell on a server engine is named scenario@postgres/LEVEL or "
                       "scenario@mariadb/LEVEL",
                       engine);
  if (slash == std::string::npos)
    return fmt::format("the isolation level is missing: write @{}/LEVEL, LEVEL one of {}", engine, levels);
  const std::string level = suffix.substr(slash + 1);
  if (!engine::parse_isolation(level))
    return fmt::format("unknown isolation level '{}'; allowed: {}", level, levels);
  return "";
}

}  // namespace

Status ExpectedMatrix::check_names(const std::vector<std::string>& handlers,
                                   const std::vector<std::string>& scenarios) const {
  for (const auto& [handler, line] : handler_lines_) {
    if (contains(handlers, handler)) continue;
    return Status::error(fmt::format("{}:{}: unknown handler '{}'; known: {} (a plugin's handlers need --plugin)", path_, line,
                        handler, joined(handlers)));
  }
  std::map<Cell, int> every_line = proved_lines_;
  for (const auto& [key, line] : lines_) every_line[key] = line;
  for (const auto& [key, line] : every_line) {
    // "scenario@engine/isolation" names that scenario's cell on a server engine.
    const std::size_t at = key.second.find('@');
    const std::string scenario = key.second.substr(0, at);
    if (!contains(scenarios, scenario))
      return Status::error(fmt::format("{}:{}: unknown scenario '{}' for {}; known: {} (a scenario of your own: give "
                                       "its file with --scenario, or keep it in the expected matrix's folder or a "
                                       "folder inside it)",
                                       path_, line, scenario, key.first, joined(scenarios)));
    if (at == std::string::npos) continue;
    if (const std::string why = cell_suffix_error(key.second.substr(at + 1)); !why.empty())
      return Status::error(fmt::format("{}:{}: '{}' for {}: {}", path_, line, key.second, key.first, why));
  }
  return Status::OK();
}

}  // namespace twice::explore
