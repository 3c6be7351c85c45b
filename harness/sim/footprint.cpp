#include "sim/footprint.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace twice::sim {

namespace {

constexpr const char* kWriterLock = "#writer";

// The statement's words, lower case: identifiers and keywords (quotes around
// an identifier dropped), punctuation as one-character words. String literals
// (the inlined parameters) are skipped whole, so a value never reads as a table.
std::vector<std::string> words_of(std::string_view sql) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\'') {
      for (++i; i < sql.size(); ++i) {
        if (sql[i] == '\'' && i + 1 < sql.size() && sql[i + 1] == '\'') ++i;  // '' inside a literal
        else if (sql[i] == '\'') break;
      }
      ++i;
      out.emplace_back("'");
    } else if (c == '"' || c == '`' || c == '[') {
      const char close = c == '[' ? ']' : c;
      const std::size_t end = sql.find(close, i + 1);
      std::string word(sql.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
      for (char& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out.push_back(std::move(word));
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      std::string word;
      while (i < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_' || sql[i] == '.'))
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(sql[i++])));
      out.push_back(std::move(word));
    } else {
      out.emplace_back(1, c);
      ++i;
    }
  }
  return out;
}

bool is_identifier(const std::string& w) {
  return !w.empty() && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_');
}

// A table name, without a schema prefix ("main.orders" is "orders").
std::string table_name(const std::string& w) {
  const std::size_t dot = w.rfind('.');
  return dot == std::string::npos ? w : w.substr(dot + 1);
}

Footprint whole_database() {
  Footprint f;
  f.whole_database = true;
  return f;
}

// SELECT: the tables after FROM and JOIN (and after the commas of a FROM
// list). A second SELECT (a subquery), a compound SELECT or no FROM at all:
// the whole database.
Footprint select_footprint(const std::vector<std::string>& w) {
  if (std::count(w.begin(), w.end(), "select") != 1) return whole_database();
  for (const char* compound : {"union", "intersect", "except"})
    if (std::find(w.begin(), w.end(), compound) != w.end()) return whole_database();
  Footprint f;
  bool in_from = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const std::string& word = w[i];
    if (word == "where" || word == "group" || word == "order" || word == "limit" || word == "having" ||
        word == "window") {
      in_from = false;
      continue;
    }
    const bool names_table = word == "from" || word == "join" || (in_from && word == ",");
    if (word == "from") in_from = true;
    if (!names_table) continue;
    if (i + 1 >= w.size() || !is_identifier(w[i + 1])) return whole_database();  // "FROM (" or a function
    if (i + 2 < w.size() && w[i + 2] == "(") return whole_database();           // a table-valued function
    f.reads.push_back(table_name(w[i + 1]));
  }
  if (f.reads.empty()) return whole_database();
  return f;
}

// INSERT/REPLACE/UPDATE/DELETE: the table written, found after the verb's
// fixed words ("INSERT OR IGNORE INTO t", "UPDATE OR FAIL t", "DELETE FROM t").
Footprint write_footprint(const std::vector<std::string>& w, bool in_transaction) {
  if (!in_transaction) return whole_database();  // autocommit: it commits, so it waits for every reader
  if (std::find(w.begin(), w.end(), "select") != w.end()) return whole_database();  // reads other tables too
  std::size_t i = 1;
  if (w[0] == "insert" || w[0] == "replace") {
    while (i < w.size() && w[i] != "into") ++i;
    ++i;
  } else if (w[0] == "update") {
    if (i < w.size() && w[i] == "or") i += 2;
  } else {  // delete
    if (i < w.size() && w[i] == "from") ++i;
  }
  if (i >= w.size() || !is_identifier(w[i])) return whole_database();
  Footprint f;
  f.writes = {table_name(w[i]), kWriterLock};
  return f;
}

}  // namespace

void Footprint::merge(const Footprint& other) {
  everything = everything || other.everything;
  whole_database = whole_database || other.whole_database;
  reads.insert(reads.end(), other.reads.begin(), other.reads.end());
  writes.insert(writes.end(), other.writes.begin(), other.writes.end());
}

bool independent(const Footprint& a, const Footprint& b) {
  if (a.touches_nothing() || b.touches_nothing()) return true;
  if (a.everything || b.everything || a.whole_database || b.whole_database) return false;
  auto meets = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    for (const auto& r : x)
      if (std::find(y.begin(), y.end(), r) != y.end()) return true;
    return false;
  };
  return !meets(a.writes, b.writes) && !meets(a.writes, b.reads) && !meets(b.writes, a.reads);
}

Footprint footprint_of(std::string_view operation, bool in_transaction) {
  const std::vector<std::string> w = words_of(operation);
  if (w.empty()) return Footprint::all();  // an operation not described: nothing known
  const std::string& verb = w[0];
  if (verb == "select") return select_footprint(w);
  if (verb == "insert" || verb == "replace" || verb == "update" || verb == "delete")
    return write_footprint(w, in_transaction);
  if (verb == "begin") {
    if (w.size() > 1 && (w[1] == "immediate" || w[1] == "exclusive")) {
      Footprint f;
      f.writes = {kWriterLock};
      return f;
    }
    return Footprint{};  // deferred: no lock until the first statement
  }
  if (verb == "commit" || verb == "end" || verb == "rollback") return whole_database();
  return Footprint::all();  // the clock, locks, the gateway, services, anything else
}

bool in_transaction_after(std::string_view operation, bool in_transaction) {
  const std::vector<std::string> w = words_of(operation);
  if (w.empty()) return in_transaction;
  if (w[0] == "begin" || w[0] == "savepoint") return true;
  // RELEASE may end the outermost savepoint's transaction: taken as ended, the
  // side where later writes count as autocommit (more dependent, never less).
  if (w[0] == "commit" || w[0] == "end" || w[0] == "release") return false;
  if (w[0] == "rollback") return w.size() > 1 && w[1] == "to" ? in_transaction : false;
  return in_transaction;
}

bool trigger_writes(std::string_view schema, TriggerWrites& out) {
  const std::vector<std::string> w = words_of(schema);
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] == "references") return false;  // a foreign key reads (and may cascade to) another table
    if (w[i] != "create" || (w[i + 1] != "trigger" && !(w[i + 1] == "temp" || w[i + 1] == "temporary"))) continue;
    // CREATE TRIGGER name [BEFORE|AFTER|INSTEAD OF] event ON table ... BEGIN body END
    std::size_t j = i + 2;
    while (j < w.size() && w[j] != "on") ++j;
    if (j + 1 >= w.size() || !is_identifier(w[j + 1])) return false;
    const std::string table = table_name(w[j + 1]);
    while (j < w.size() && w[j] != "begin") ++j;
    if (j >= w.size()) return false;
    for (++j; j < w.size() && w[j] != "end"; ++j) {
      std::size_t t = 0;
      if ((w[j] == "insert" || w[j] == "replace")) {
        t = j + 1;
        while (t < w.size() && w[t] != "into" && w[t] != ";") ++t;
        ++t;
      } else if (w[j] == "update") {
        t = j + 1;
        if (t < w.size() && w[t] == "or") t += 2;
      } else if (w[j] == "delete" && j + 1 < w.size() && w[j + 1] == "from") {
        t = j + 2;
      } else {
        continue;
      }
      if (t >= w.size() || !is_identifier(w[t])) return false;
      out[table].push_back(table_name(w[t]));
    }
    if (j >= w.size()) return false;
    i = j;
  }
  return true;
}

void add_trigger_writes(const TriggerWrites& triggers, Footprint& f) {
  const std::vector<std::string> written = f.writes;
  for (const auto& table : written)
    if (auto it = triggers.find(table); it != triggers.end())
      for (const auto& also : it->second)
        if (std::find(f.writes.begin(), f.writes.end(), also) == f.writes.end()) f.writes.push_back(also);
}

std::string describe(const Footprint& f) {
  if (f.everything) return "everything";
  if (f.whole_database) return "the whole database";
  if (f.touches_nothing()) return "nothing";
  return fmt::format("reads {}; writes {}", fmt::join(f.reads, ", "), fmt::join(f.writes, ", "));
}

}  // namespace twice::sim
