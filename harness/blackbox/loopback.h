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

// Checks the host of a --db URL (postgres://, postgresql://, mysql://): a
// loopback host, or none at all (a Unix socket). A SQLite path passes.
Status check_database_is_local(const std::string& db);

}  // namespace twice::blackbox
