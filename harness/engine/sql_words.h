// Recognizing a statement by its first word ("COMMIT", "SAVEPOINT ..."), as
// PostgreSQL's and MariaDB's Db need to for transaction control. Plain
// functions; safe everywhere.
#pragma once

#include <cctype>
#include <initializer_list>
#include <string_view>

namespace twice::engine {

// `sql` starts with `word` (upper case), any case, followed by nothing, a
// space or a semicolon.
inline bool is_word(std::string_view sql, std::string_view word) {
  if (sql.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(sql[i])) != word[i]) return false;
  return sql.size() == word.size() || sql[word.size()] == ' ' || sql[word.size()] == ';';
}

inline bool starts_with_any(std::string_view sql, std::initializer_list<std::string_view> words) {
  for (std::string_view word : words)
    if (is_word(sql, word)) return true;
  return false;
}

}  // namespace twice::engine
