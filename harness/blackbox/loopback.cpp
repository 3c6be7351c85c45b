#include "blackbox/loopback.h"

#include <arpa/inet.h>

#include <charconv>

#include <fmt/format.h>

namespace twice::blackbox {
namespace {

constexpr const char* kOnlyLoopback = "only loopback is ever contacted (127.0.0.1, ::1, localhost); run the service on this machine";

}  // namespace

bool is_loopback_host(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  const std::string h(host);
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

StatusOr<HttpEndpoint> parse_endpoint(const std::string& url) {
  const auto bad = [&](const std::string& why) {
    return Status::error(fmt::format("--endpoint {}: {}", url, why));
  };
  if (url.starts_with("https://")) return bad("https is not served; give the service's plain http port on loopback");
  if (!url.starts_with("http://")) return bad("not an http URL; write http://127.0.0.1:PORT/path");
  std::string_view rest = std::string_view(url).substr(7);
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpEndpoint e;
  e.url = url;
  e.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos) return bad("user info is not supported in the URL");
  std::string_view host = authority, port;
  if (authority.starts_with("[")) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address needs its closing ']'");
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return bad("expected ':PORT' after the IPv6 address");
      port = authority.substr(close + 2);
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return bad("no host; write http://127.0.0.1:PORT/path");
  if (!is_loopback_host(host)) return bad(fmt::format("host '{}' is not loopback: {}", host, kOnlyLoopback));
  if (!port.empty()) {
    int p = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535)
      return bad(fmt::format("port '{}' is not a number in 1..65535", port));
    e.port = p;
  }
  if (host.starts_with("[")) host = host.substr(1, host.size() - 2);
  e.host = std::string(host);
  return e;
}

Status check_database_is_local(const std::string& db) {
  std::string_view rest;
  for (std::string_view scheme : {"postgres://", "postgresql://", "mysql://"})
    if (db.starts_with(scheme)) rest = std::string_view(db).substr(scheme.size());
  if (rest.data() == nullptr) return Status::OK();  // a SQLite file
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  std::string_view host = authority;
  if (authority.starts_with("[")) {
    host = authority.substr(0, authority.find(']') + 1);
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
  }
  // No host: libpq and MariaDB's client use their Unix socket.
  if (host.empty() || is_loopback_host(host)) {
    // ?host=/path (libpq) and ?socket=/path name a socket; any other host= is a host.
    const std::size_t q = db.find("host=");
    if (q == std::string::npos) return Status::OK();
    std::string_view value = std::string_view(db).substr(q + 5);
    value = value.substr(0, value.find('&'));
    if (value.starts_with("/") || value.starts_with("%2F") || is_loopback_host(value)) return Status::OK();
    host = value;
  }
  return Status::error(fmt::format("--db {}: host '{}' is not loopback: {}", db, host, kOnlyLoopback));
}

}  // namespace twice::blackbox
