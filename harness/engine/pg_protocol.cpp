#include "engine/pg_protocol.h"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace twice::engine {
namespace {

// Type OIDs from PostgreSQL's pg_type.dat (stable across versions).
constexpr Oid kBool = 16, kInt8 = 20, kInt2 = 21, kInt4 = 23, kOid = 26, kFloat4 = 700, kFloat8 = 701,
              kNumeric = 1700;

Value column_value(PGresult* r, int row, int col) {
  if (PQgetisnull(r, row, col)) return Value();
  const char* text = PQgetvalue(r, row, col);
  switch (PQftype(r, col)) {
    case kBool: return Value(text[0] == 't' ? 1 : 0);
    case kInt2:
    case kInt4:
    case kInt8:
    case kOid: return Value(static_cast<long long>(std::strtoll(text, nullptr, 10)));
    case kFloat4:
    case kFloat8: return Value(std::strtod(text, nullptr));
    case kNumeric:
      // SUM() of integers is numeric in PostgreSQL; a whole one reads as SQLite's would.
      if (!std::strpbrk(text, ".eE")) return Value(static_cast<long long>(std::strtoll(text, nullptr, 10)));
      return Value(std::strtod(text, nullptr));
    default: return Value(std::string(text, static_cast<std::size_t>(PQgetlength(r, row, col))));
  }
}

}  // namespace

namespace {

// Calls `emit(text)` for the SQL between placeholders and `param(index)` for
// each ? (numbered in order) or ?N, skipping literals, identifiers, comments.
template <class Text, class Param>
void scan_placeholders(std::string_view sql, Text emit, Param param) {
  int next = 0;
  std::size_t plain = 0;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      const std::size_t end = sql.find(c, i + 1);
      i = end == std::string_view::npos ? sql.size() - 1 : end;
      continue;
    }
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const std::size_t end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() - 1 : end;
      continue;
    }
    if (c != '?') continue;
    emit(sql.substr(plain, i - plain));
    std::size_t j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') ++j;
    param(j > i + 1 ? std::stoi(std::string(sql.substr(i + 1, j - i - 1))) : ++next);
    i = j - 1;
    plain = j;
  }
  emit(sql.substr(plain));
}

}  // namespace

std::string inline_parameters(std::string_view sql, const std::vector<Value>& params) {
  std::string out;
  scan_placeholders(
      sql, [&](std::string_view text) { out.append(text); },
      [&](int n) {
        if (n < 1 || static_cast<std::size_t>(n) > params.size()) {
          out += "NULL";
          return;
        }
        const Value& v = params[static_cast<std::size_t>(n) - 1];
        if (v.is_null()) out += "NULL";
        else if (v.is_integer() || v.is_real()) out += v.as_text();
        else {
          out += '\'';
          for (char c : v.as_text()) out += c == '\'' ? std::string("''") : std::string(1, c);
          out += '\'';
        }
      });
  return out;
}

std::string to_dollar_placeholders(std::string_view sql) {
  std::string out;
  scan_placeholders(
      sql, [&](std::string_view text) { out.append(text); }, [&](int n) { out += fmt::format("${}", n); });
  return out;
}

std::vector<const char*> text_params(const std::vector<Value>& params, std::vector<std::string>& storage) {
  storage.clear();
  storage.reserve(params.size());
  std::vector<const char*> out;
  out.reserve(params.size());
  for (const auto& p : params) storage.push_back(p.as_text());
  for (std::size_t i = 0; i < params.size(); ++i) out.push_back(params[i].is_null() ? nullptr : storage[i].c_str());
  return out;
}

Status status_from_sqlstate(std::string_view sqlstate, std::string message) {
  if (sqlstate.starts_with("23")) return Status::constraint(std::move(message));
  if (sqlstate == "40001") return Status::serialization(std::move(message));
  if (sqlstate == "40P01") return Status::deadlock(std::move(message));
  if (sqlstate == "55P03") return Status::lock_timeout(std::move(message));
  return Status::error(fmt::format("{} (SQLSTATE {})", message, sqlstate));
}

Result to_result(PGconn* conn, PGresult* r) {
  Result out;
  if (!r) {
    out.status = Status::error(fmt::format("PostgreSQL connection: {}", PQerrorMessage(conn)));
    return out;
  }
  const ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_FATAL_ERROR || st == PGRES_NONFATAL_ERROR || st == PGRES_BAD_RESPONSE) {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    out.status = status_from_sqlstate(state ? state : "XX000", primary ? primary : PQresultErrorMessage(r));
    return out;
  }
  const int ncols = PQnfields(r);
  for (int c = 0; c < ncols; ++c) out.columns.emplace_back(PQfname(r, c));
  const int nrows = PQntuples(r);
  out.rows.reserve(static_cast<std::size_t>(nrows));
  for (int row = 0; row < nrows; ++row) {
    Row values;
    values.reserve(static_cast<std::size_t>(ncols));
    for (int c = 0; c < ncols; ++c) values.push_back(column_value(r, row, c));
    out.rows.push_back(std::move(values));
  }
  const std::string_view tag = PQcmdStatus(r);
  if (tag.starts_with("INSERT") || tag.starts_with("UPDATE") || tag.starts_with("DELETE"))
    out.changes = std::strtoll(PQcmdTuples(r), nullptr, 10);
  return out;
}

}  // namespace twice::engine
