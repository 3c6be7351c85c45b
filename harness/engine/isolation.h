// Isolation: the transaction isolation level a server engine's connections
// run at (--isolation). SQLite has one behaviour (serializable, one writer)
// and ignores it. Plain values; safe everywhere.
#pragma once

#include <optional>
#include <string_view>

namespace twice::engine {

enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

// "read-committed", "repeatable-read", "serializable": the flag's words and a
// cell name's suffix.
constexpr std::string_view isolation_name(Isolation i) {
  switch (i) {
    case Isolation::kReadCommitted: return "read-committed";
    case Isolation::kRepeatableRead: return "repeatable-read";
    case Isolation::kSerializable: return "serializable";
  }
  return "?";
}

// The level in SQL ("READ COMMITTED"), as SET TRANSACTION takes it.
constexpr std::string_view isolation_sql(Isolation i) {
  switch (i) {
    case Isolation::kReadCommitted: return "READ COMMITTED";
    case Isolation::kRepeatableRead: return "REPEATABLE READ";
    case Isolation::kSerializable: return "SERIALIZABLE";
  }
  return "?";
}

inline std::optional<Isolation> parse_isolation(std::string_view text) {
  for (auto i : {Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable})
    if (text == isolation_name(i)) return i;
  return std::nullopt;
}

}  // namespace twice::engine
