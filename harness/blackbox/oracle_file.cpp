#include "blackbox/oracle_file.h"

#include <filesystem>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace twice::blackbox {
namespace {

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

}  // namespace

StatusOr<Schema> load_oracle(const std::string& path) {
  // toml++ reads a folder as an empty file: ":1: setup_sql is missing".
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::error(fmt::format("{}: is a folder; give --oracle the oracle file (a .toml) in it", path));
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    if (e.source().begin.line == 0)  // not even opened
      return Status::error(fmt::format("{}: cannot read the oracle file: {}; give --oracle an existing TOML file", path,
                                       std::string(e.description())));
    return Status::error(fmt::format("{}:{}: {}; fix the TOML syntax (docs/black-box.md has an example)", path,
                                     e.source().begin.line, std::string(e.description())));
  }
  Schema s;
  const std::map<std::string, std::string*> queries = {
      {"setup_sql", &s.setup_sql},         {"insert_order_sql", &s.insert_order_sql},
      {"insert_account_sql", &s.insert_account_sql}, {"credits_sql", &s.credits_sql},
      {"balances_sql", &s.balances_sql},   {"refunds_sql", &s.refunds_sql},
      {"statuses_sql", &s.statuses_sql},   {"transitions_sql", &s.transitions_sql},
      {"payloads_sql", &s.payloads_sql},   {"reversals_sql", &s.reversals_sql},
  };
  const std::map<std::string, std::string*> states = {{"waiting", &s.states.waiting},
                                                      {"paid", &s.states.paid},
                                                      {"closed", &s.states.closed},
                                                      {"refunded", &s.states.refunded}};
  const auto known = [](const std::map<std::string, std::string*>& m, const char* extra) {
    std::string out;
    for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + k;
    return out + extra;
  };
  for (const auto& [key, node] : root) {
    const std::string name(key.str());
    if (name == "states") {
      const toml::table* t = node.as_table();
      if (!t) return Status::error(fmt::format("{}:{}: states must be a table [states]", path, line_of(node)));
      for (const auto& [k, v] : *t) {
        const auto it = states.find(std::string(k.str()));
        if (it == states.end())
          return Status::error(fmt::format("{}:{}: unknown state '{}'; known: {}", path, line_of(v), k.str(),
                                           known(states, "")));
        const auto* str = v.as_string();
        if (!str) return Status::error(fmt::format("{}:{}: states.{} must be a string", path, line_of(v), k.str()));
        *it->second = str->get();
      }
      continue;
    }
    const auto it = queries.find(name);
    if (it == queries.end())
      return Status::error(
          fmt::format("{}:{}: unknown key '{}'; known: {}", path, line_of(node), name, known(queries, ", [states]")));
    const auto* str = node.as_string();
    if (!str)
      return Status::error(fmt::format("{}:{}: {} must be a string of SQL (\"\"\"...\"\"\" for several lines)", path,
                                       line_of(node), name));
    *it->second = str->get();
  }
  for (const char* required : {"setup_sql", "insert_order_sql", "insert_account_sql", "credits_sql", "balances_sql"})
    if (queries.at(required)->empty())
      return Status::error(fmt::format("{}:1: {} is missing; the oracle file must give it (docs/black-box.md)", path,
                                       required));
  s.postgres_setup_sql = s.setup_sql;
  s.mariadb_setup_sql = s.setup_sql;
  return s;
}

}  // namespace twice::blackbox
