// Loopback addresses: black-box mode contacts only this machine. The service
// under test (--endpoint) and its database (--db) must be reached over
// loopback or a Unix socket; anything else is refused before any request is
// sent, so a mistyped URL never plays a gateway against someone's server.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "twice/status_or.h"

namespace twice::blackbox {

// http://HOST:PORT/PATH, split.
struct HttpEndpoint {
  std::string url;   // as given
  std::string host;  // "127.0.0.1", "::1", "localhost"
  int port = 80;
  std::string path;  // "/notify"; "/" when the URL has none
};

// 127.0.0.0/8, ::1 (bracketed or not) and "localhost".
bool is_loopback_host(std::string_view host);

// Reads an --endpoint URL. Refuses https (twice serves no certificates),
// user info, a port outside 1..65535 and any host that is not loopback; the
// Status is one line naming the URL and the fix.
StatusOr<HttpEndpoint> parse_endpoint(const std::string& url);

// Checks every address a --db URL (postgres://, postgresql://, mysql://)
// would make libpq or MariaDB's client contact: each host of a multi-host
// list, ?host= and ?hostaddr= (percent-encoded or not), and, where the URL
// names none, the PGHOST / PGHOSTADDR / MYSQL_HOST they fall back on. Each
// must be loopback or a Unix socket; a connection service (?service=,
// PGSERVICE), which can name any host, is refused. A SQLite path passes.
Status check_database_is_local(const std::string& db);

}  // namespace twice::blackbox
