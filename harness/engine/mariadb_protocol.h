// What every MariaDB connection of twice shares: where a server is (a socket
// twice started, or a mysql:// URL), opening a connection with the options
// every engine's Result needs (CLIENT_FOUND_ROWS: changes counts rows
// matched, as on SQLite and PostgreSQL), the `?` / `?N` placeholders of the
// Db API filled in client-side as literals (what JDBC's default client-side
// prepared statements send), a MYSQL_RES read back as a Result, and MariaDB's
// error numbers mapped onto Status codes. Pure functions and plain data;
// safe from any thread (each MYSQL* belongs to one thread).
#pragma once

#include <mysql.h>

#include <string>
#include <string_view>
#include <vector>

#include "twice/db.h"

namespace twice::engine {

// How to reach a server.
struct MariadbAddress {
  std::string socket;  // a Unix socket; when empty, host and port
  std::string host;
  unsigned port = 0;
  std::string user = "root";
  std::string password;
  std::string database;  // the URL's, for the admin connection; runs use their own
};

// mysql://user[:password]@host[:port][/database][?socket=/path]; false and a
// one-line `error` when `url` is not one, saying what is wrong without
// quoting the URL: the caller names it, as engine_url_for_message() shows it.
bool parse_mariadb_url(const std::string& url, MariadbAddress& out, std::string& error);

// `s` with each %XX written as the byte it encodes (a URL's user and
// password may carry '@', ':' or '/' as %40, %3A, %2F).
std::string percent_decoded(const std::string& s);

// Connects to `database` ("" for none) with CLIENT_FOUND_ROWS and, when
// `multi` is set, CLIENT_MULTI_STATEMENTS; `nonblocking` turns on
// MYSQL_OPT_NONBLOCK for the *_start/_cont calls. Null and `error` set on failure.
MYSQL* connect_mariadb(const MariadbAddress& at, const std::string& database, bool multi, bool nonblocking,
                       std::string& error);

// `sql` with each ? / ?N replaced by its parameter as a MariaDB literal.
// Question marks inside literals, quoted identifiers and comments stay.
std::string mariadb_inline_parameters(std::string_view sql, const std::vector<Value>& params);

// MariaDB error number -> Status: 1213 deadlock, 1205 lock wait timeout,
// 1020 (a row changed since the transaction's snapshot, under
// innodb_snapshot_isolation) a serialization failure, duplicate keys /
// CHECK / NOT NULL / foreign keys a constraint, anything else an error. The
// message is the server's.
Status mariadb_status(unsigned int error_number, std::string message);

// The Status of the last call on `conn` (OK when mysql_errno is 0).
Status mariadb_status(MYSQL* conn);

// One statement's outcome: `res` its rows (null for a statement without
// rows). Integer columns (and DECIMAL without a fraction: SUM() of BIGINT)
// read as integers, floating columns as reals, the rest as text; changes is
// mysql_affected_rows (rows matched, with CLIENT_FOUND_ROWS) for statements
// without rows.
Result mariadb_result(MYSQL* conn, MYSQL_RES* res);

}  // namespace twice::engine
