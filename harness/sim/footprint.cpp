#include "sim/footprint.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace twice::sim {

namespace {

constexpr const char* kWriterLock = "#writer";

// The statement's words, lower case: identifiers and keywords (quotes around
// an identifier dropped), punctuation as one-character words. A string
// literal (an inlined parameter) is one word, a quote and its value as
// written, so a value never reads as a table.
std::vector<std::string> words_of(std::string_view sql) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\'') {
      std::string literal = "'";  // a literal's word: a quote, then its value
      for (++i; i < sql.size(); ++i) {
        if (sql[i] == '\'' && i + 1 < sql.size() && sql[i + 1] == '\'') literal += sql[++i];  // '' inside a literal
        else if (sql[i] == '\'') break;
        else literal += sql[i];
      }
      ++i;
      out.push_back(std::move(literal));
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

bool is_literal(const std::string& w) {
  if (w.empty()) return false;
  if (w[0] == '\'') return true;
  return std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// A literal's key value (key_spelling()), whether quoted or not. Two values
// that differ here differ under any of SQLite's comparisons.
std::string key_value(const std::string& literal) {
  return key_spelling(literal[0] == '\'' ? literal.substr(1) : literal);
}

std::string column_name(const std::string& w) { return table_name(w); }

using Keys = std::vector<std::pair<std::string, std::string>>;

// The `col = literal` terms of a WHERE clause that is a plain conjunction
// (words from `from` to the end of the clause). Anything that could make a
// term not bind every row — OR, NOT, parentheses (a subquery, a function, a
// grouping), BETWEEN ... AND, CASE, COLLATE — leaves no keys.
Keys where_keys(const std::vector<std::string>& w, std::size_t from) {
  std::size_t end = from;
  while (end < w.size() && w[end] != ";" && w[end] != "order" && w[end] != "limit" && w[end] != "group" &&
         w[end] != "returning" && w[end] != "window" && w[end] != "having")
    ++end;
  for (std::size_t i = from; i < end; ++i)
    if (w[i] == "or" || w[i] == "not" || w[i] == "(" || w[i] == "between" || w[i] == "case" || w[i] == "collate" ||
        w[i] == "select")
      return {};
  Keys keys;
  std::size_t start = from;
  for (std::size_t i = from; i <= end; ++i) {
    if (i < end && w[i] != "and") continue;
    // One term: words [start, i).
    if (i - start == 3 && w[start + 1] == "=") {
      const std::string& a = w[start];
      const std::string& b = w[start + 2];
      if (is_identifier(a) && is_literal(b)) keys.emplace_back(column_name(a), key_value(b));
      else if (is_literal(a) && is_identifier(b)) keys.emplace_back(column_name(b), key_value(a));
    }
    start = i + 1;
  }
  return keys;
}

std::size_t find_word(const std::vector<std::string>& w, const char* word, std::size_t from = 0) {
  for (std::size_t i = from; i < w.size(); ++i)
    if (w[i] == word) return i;
  return w.size();
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
  const std::size_t from = find_word(w, "from"), where = find_word(w, "where");
  if (f.reads.size() == 1 && find_word(w, ",", from) >= where) {
    // One table (no join, no FROM list): the rows its WHERE keys select.
    if (where < w.size())
      if (Keys keys = where_keys(w, where + 1); !keys.empty()) f.rows[f.reads[0]] = std::move(keys);
  }
  return f;
}

// The rows a write touches, by key, from the words after its table name; none
// when the statement could touch rows other than those its keys name.
Keys write_keys(const std::vector<std::string>& w, std::size_t after_table) {
  const std::string& verb = w[0];
  if (verb == "replace") return {};  // deletes whichever rows conflict, on any unique column
  if (verb == "insert") {
    // INSERT [OR IGNORE|ABORT|FAIL|ROLLBACK] INTO t (cols) VALUES (literals): that one row.
    if (w.size() > 2 && w[1] == "or" && w[2] == "replace") return {};
    if (find_word(w, "conflict") < w.size()) return {};  // an upsert updates another row
    std::size_t i = after_table;
    if (i >= w.size() || w[i] != "(") return {};
    std::vector<std::string> columns;
    for (++i; i < w.size() && w[i] != ")"; ++i)
      if (w[i] != ",") columns.push_back(column_name(w[i]));
    if (i + 2 >= w.size() || w[i + 1] != "values" || w[i + 2] != "(") return {};
    Keys keys;
    std::size_t c = 0;
    for (i += 3; i < w.size() && w[i] != ")"; ++i) {
      if (w[i] == ",") {
        ++c;
        continue;
      }
      if (c >= columns.size()) return {};
      // A value that is one literal is a key; an expression (a sign, a function) is not.
      if (is_literal(w[i]) && i + 1 < w.size() && (w[i + 1] == "," || w[i + 1] == ")"))
        keys.emplace_back(columns[c], key_value(w[i]));
      else if (w[i] == "(")
        return {};
    }
    if (i >= w.size() || c + 1 != columns.size()) return {};
    if (i + 1 < w.size() && w[i + 1] == ",") return {};  // more than one row
    return keys;
  }
  const std::size_t where = find_word(w, "where", after_table);
  if (where >= w.size()) return {};
  Keys keys = where_keys(w, where + 1);
  if (verb == "update") {
    // UPDATE t SET a = ..., b = ... WHERE ...: the rows move off the keys of the columns set.
    const std::size_t set = find_word(w, "set", after_table);
    if (set >= where || (set + 1 < w.size() && w[set + 1] == "(")) return {};
    if (find_word(w, "from", set) < where) return {};  // UPDATE ... FROM another table
    std::vector<std::string> assigned;
    int depth = 0;
    for (std::size_t i = set + 1; i + 1 < where; ++i) {
      if (w[i] == "(") ++depth;
      if (w[i] == ")") --depth;
      if (depth == 0 && is_identifier(w[i]) && w[i + 1] == "=") assigned.push_back(column_name(w[i]));
    }
    std::erase_if(keys, [&assigned](const auto& k) {
      return std::find(assigned.begin(), assigned.end(), k.first) != assigned.end();
    });
  }
  return keys;
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
  const std::string table = table_name(w[i]);
  f.writes = {table, kWriterLock};
  if (Keys keys = write_keys(w, i + 1); !keys.empty()) f.rows[table] = std::move(keys);
  return f;
}

}  // namespace

namespace {

bool touches_table(const Footprint& f, const std::string& table) {
  return std::find(f.reads.begin(), f.reads.end(), table) != f.reads.end() ||
         std::find(f.writes.begin(), f.writes.end(), table) != f.writes.end();
}

// The keys of `table` as `f` touches it (empty: any row).
const Keys* keys_of(const Footprint& f, const std::string& table) {
  const auto it = f.rows.find(table);
  return it == f.rows.end() ? nullptr : &it->second;
}

// Rows of `table` that `a` touches and rows that `b` touches are disjoint:
// some column is keyed to different values on both sides.
bool disjoint_rows(const Footprint& a, const Footprint& b, const std::string& table) {
  const Keys* ka = keys_of(a, table);
  const Keys* kb = keys_of(b, table);
  if (!ka || !kb) return false;
  for (const auto& [column, value] : *ka)
    for (const auto& [other_column, other_value] : *kb)
      if (column == other_column && value != other_value) return true;
  return false;
}

}  // namespace

void Footprint::merge(const Footprint& other) {
  // A table both steps touch is keyed by what both say of its rows (their
  // union satisfies only the terms they share); touched without keys by
  // either: any row.
  std::map<std::string, Keys> rows_out;
  for (const auto& [table, keys] : rows) {
    if (!touches_table(other, table)) {
      rows_out[table] = keys;
      continue;
    }
    const Keys* theirs = keys_of(other, table);
    if (!theirs) continue;
    Keys shared;
    for (const auto& k : keys)
      if (std::find(theirs->begin(), theirs->end(), k) != theirs->end()) shared.push_back(k);
    if (!shared.empty()) rows_out[table] = std::move(shared);
  }
  for (const auto& [table, keys] : other.rows)
    if (!touches_table(*this, table)) rows_out[table] = keys;
  rows = std::move(rows_out);
  everything = everything || other.everything;
  whole_database = whole_database || other.whole_database;
  reads.insert(reads.end(), other.reads.begin(), other.reads.end());
  writes.insert(writes.end(), other.writes.begin(), other.writes.end());
}

bool independent(const Footprint& a, const Footprint& b) {
  if (a.touches_nothing() || b.touches_nothing()) return true;
  if (a.everything || b.everything || a.whole_database || b.whole_database) return false;
  auto meets = [&a, &b](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    for (const auto& r : x)
      if (std::find(y.begin(), y.end(), r) != y.end() && !disjoint_rows(a, b, r)) return true;
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
  std::string out = fmt::format("reads {}; writes {}", fmt::join(f.reads, ", "), fmt::join(f.writes, ", "));
  for (const auto& [table, keys] : f.rows) {
    std::vector<std::string> terms;
    for (const auto& [column, value] : keys) terms.push_back(column + "=" + value);
    out += fmt::format("; rows of {}: {}", table, fmt::join(terms, ", "));
  }
  return out;
}

std::string key_spelling(const std::string& value) {
  const auto first = value.find_first_not_of(" \t\n\r");
  std::string v =
      first == std::string::npos ? std::string() : value.substr(first, value.find_last_not_of(" \t\n\r") - first + 1);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!v.empty()) {
    char* end = nullptr;
    const double number = std::strtod(v.c_str(), &end);
    if (end && *end == '\0') return fmt::format("#{}", number);
  }
  return v;
}

}  // namespace twice::sim
