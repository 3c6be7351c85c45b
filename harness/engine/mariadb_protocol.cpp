#include "engine/mariadb_protocol.h"

#include <mysqld_error.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "engine/engine_url.h"

namespace twice::engine {
namespace {

// A string literal for MariaDB's default sql_mode (backslash escapes on).
std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "''"; break;
      case '\\': out += "\\\\"; break;
      case '\0': out += "\\0"; break;
      case '\032': out += "\\Z"; break;
      default: out += c;
    }
  }
  return out + "'";
}

Value column_value(const MYSQL_FIELD& field, const char* text, unsigned long length) {
  if (!text) return Value();
  switch (field.type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR: return Value(static_cast<long long>(std::strtoll(text, nullptr, 10)));
    case MYSQL_TYPE_FLOAT:
    case MYSQL_TYPE_DOUBLE: return Value(std::strtod(text, nullptr));
    case MYSQL_TYPE_DECIMAL:
    case MYSQL_TYPE_NEWDECIMAL:
      // SUM() of BIGINT is DECIMAL; a whole one reads as SQLite's would.
      if (!std::memchr(text, '.', length)) return Value(static_cast<long long>(std::strtoll(text, nullptr, 10)));
      return Value(std::strtod(text, nullptr));
    default: return Value(std::string(text, length));
  }
}

}  // namespace

// A URL's user and password may carry '@', ':' or '/' as %40, %3A, %2F.
std::string percent_decoded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

bool parse_mariadb_url(const std::string& url, MariadbAddress& out, std::string& error) {
  out = MariadbAddress{};
  constexpr std::string_view kScheme = "mysql://";
  if (!url.starts_with(kScheme)) {
    error = "not a MariaDB URL (mysql://user@host[:port][/db][?socket=/path])";
    return false;
  }
  std::string rest = url.substr(kScheme.size());
  if (const auto q = rest.find('?'); q != std::string::npos) {
    const std::string query = rest.substr(q + 1);
    rest.resize(q);
    if (!query.starts_with("socket=")) {
      error = "the only option is ?socket=/path";
      return false;
    }
    out.socket = query.substr(7);
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    out.database = rest.substr(slash + 1);
    rest.resize(slash);
  }
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    std::string user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (const auto colon = user.find(':'); colon != std::string::npos) {
      out.password = percent_decoded(user.substr(colon + 1));
      user.resize(colon);
    }
    if (!user.empty()) out.user = percent_decoded(user);
  }
  if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    rest.resize(colon);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end || p <= 0 || p > 65535) {
      error = fmt::format("'{}' is not a port", port);
      return false;
    }
    out.port = static_cast<unsigned>(p);
  }
  out.host = rest;
  if (out.host.empty() && out.socket.empty()) {
    error = "it names no host (mysql://user@host/db)";
    return false;
  }
  return true;
}

MYSQL* connect_mariadb(const MariadbAddress& at, const std::string& database, bool multi, bool nonblocking,
                       std::string& error) {
  MYSQL* m = mysql_init(nullptr);
  if (!m) {
    error = "MariaDB: out of memory";
    return nullptr;
  }
  unsigned int timeout = 10;
  mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  // No option files of the machine's: the same session settings everywhere.
  if (nonblocking) mysql_options(m, MYSQL_OPT_NONBLOCK, nullptr);
  unsigned long flags = CLIENT_FOUND_ROWS;
  if (multi) flags |= CLIENT_MULTI_STATEMENTS;
  const char* host = at.socket.empty() ? at.host.c_str() : nullptr;
  const char* socket = at.socket.empty() ? nullptr : at.socket.c_str();
  if (!mysql_real_connect(m, host, at.user.c_str(), at.password.empty() ? nullptr : at.password.c_str(),
                          database.empty() ? nullptr : database.c_str(), at.port, socket, flags)) {
    // Connector/C's text names the host or socket; never the password, which
    // is masked all the same should a message of another version echo it.
    error = fmt::format("cannot connect to MariaDB: {}", without_password(mysql_error(m), at.password));
    mysql_close(m);
    return nullptr;
  }
  if (mysql_query(m, "SET NAMES utf8mb4 COLLATE utf8mb4_bin") != 0) {
    error = fmt::format("MariaDB: SET NAMES: {}", mysql_error(m));
    mysql_close(m);
    return nullptr;
  }
  return m;
}

std::string mariadb_inline_parameters(std::string_view sql, const std::vector<Value>& params) {
  std::string out;
  out.reserve(sql.size() + 16 * params.size());
  int next = 0;
  auto literal = [&](int n) {
    if (n < 1 || static_cast<std::size_t>(n) > params.size()) return std::string("NULL");
    const Value& v = params[static_cast<std::size_t>(n) - 1];
    if (v.is_null()) return std::string("NULL");
    if (v.is_integer() || v.is_real()) return v.as_text();
    return quote(v.as_text());
  };
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'' || c == '"' || c == '`') {
      // A quoted run, with backslash escapes inside string literals.
      std::size_t j = i + 1;
      while (j < sql.size() && sql[j] != c) j += (sql[j] == '\\' && c != '`') ? 2 : 1;
      const std::size_t end = std::min(j, sql.size() - 1);
      out.append(sql.substr(i, end - i + 1));
      i = end;
      continue;
    }
    if ((c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') || c == '#') {
      const std::size_t end = std::min(sql.find('\n', i), sql.size() - 1);
      out.append(sql.substr(i, end - i + 1));
      i = end;
      continue;
    }
    if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      const std::size_t close = sql.find("*/", i + 2);
      const std::size_t end = close == std::string_view::npos ? sql.size() - 1 : close + 1;
      out.append(sql.substr(i, end - i + 1));
      i = end;
      continue;
    }
    if (c != '?') {
      out += c;
      continue;
    }
    std::size_t j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') ++j;
    out += literal(j > i + 1 ? std::atoi(std::string(sql.substr(i + 1, j - i - 1)).c_str()) : ++next);
    i = j - 1;
  }
  return out;
}

Status mariadb_status(unsigned int error_number, std::string message) {
  switch (error_number) {
    case 0: return Status::OK();
    case ER_LOCK_DEADLOCK: return Status::deadlock(std::move(message));
    case ER_LOCK_WAIT_TIMEOUT: return Status::lock_timeout(std::move(message));
    // "Record has changed since last read": under innodb_snapshot_isolation
    // (ON by default from MariaDB 11.8), a REPEATABLE READ transaction wrote
    // a row another committed since its snapshot. InnoDB's 40001: the whole
    // transaction is rolled back, and running it again may succeed.
    case ER_CHECKREAD: return Status::serialization(std::move(message));
    case ER_DUP_ENTRY:
    case ER_DUP_ENTRY_WITH_KEY_NAME:
    case ER_DUP_KEY:
    case ER_BAD_NULL_ERROR:
    case ER_NO_REFERENCED_ROW:
    case ER_NO_REFERENCED_ROW_2:
    case ER_ROW_IS_REFERENCED:
    case ER_ROW_IS_REFERENCED_2:
    case ER_CONSTRAINT_FAILED: return Status::constraint(std::move(message));
    default: return Status::error(std::move(message));
  }
}

Status mariadb_status(MYSQL* conn) { return mariadb_status(mysql_errno(conn), mysql_error(conn)); }

Result mariadb_result(MYSQL* conn, MYSQL_RES* res) {
  Result out;
  if (!res) {
    out.status = mariadb_status(conn);
    if (out.ok()) out.changes = static_cast<std::int64_t>(mysql_affected_rows(conn));
    return out;
  }
  const unsigned int n = mysql_num_fields(res);
  const MYSQL_FIELD* fields = mysql_fetch_fields(res);
  for (unsigned int c = 0; c < n; ++c) out.columns.emplace_back(fields[c].name, fields[c].name_length);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    const unsigned long* lengths = mysql_fetch_lengths(res);
    Row r;
    r.reserve(n);
    for (unsigned int c = 0; c < n; ++c) r.push_back(column_value(fields[c], row[c], lengths[c]));
    out.rows.push_back(std::move(r));
  }
  return out;
}

}  // namespace twice::engine
