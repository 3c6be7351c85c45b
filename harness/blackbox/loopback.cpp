#include "blackbox/loopback.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "engine/engine_url.h"

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

namespace {

std::string percent_decoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    int value = 0;
    if (s[i] == '%' && i + 2 < s.size() &&
        std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16).ptr == s.data() + i + 3) {
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char by) {
  std::vector<std::string_view> out;
  for (;;) {
    const std::size_t at = s.find(by);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 1);
  }
}

// One host of a URL's host list, "[::1]:5432", "db:5432", "127.0.0.1", without its port.
std::string_view without_port(std::string_view hostport) {
  if (hostport.starts_with("[")) return hostport.substr(0, hostport.find(']') + 1);
  return hostport.substr(0, hostport.find(':'));
}

// A libpq host= value: a socket folder ("/run/postgresql", "@abstract"), the
// default socket (empty), or a host that must be loopback.
bool pg_host_is_local(std::string_view host) {
  return host.empty() || host.starts_with("/") || host.starts_with("@") || is_loopback_host(host);
}

}  // namespace

// What libpq and MariaDB's client would contact, every way they read it: each
// host of a multi-host list, host= and hostaddr= (hostaddr wins over host in
// libpq), percent-encoded or not, and the environment they fall back on when
// the URL names none (PGHOST, PGHOSTADDR, PGSERVICE, MYSQL_HOST). Checked
// before any connection is opened.
Status check_database_is_local(const std::string& db) {
  std::string_view rest;
  bool postgres = false;
  for (std::string_view scheme : {"postgres://", "postgresql://", "mysql://"})
    if (db.starts_with(scheme)) {
      rest = std::string_view(db).substr(scheme.size());
      postgres = scheme != "mysql://";
    }
  if (rest.data() == nullptr) return Status::OK();  // a SQLite file
  // The URL as every message shows it, without its password; a host read out
  // of a password written unencoded ("pa/ss") is masked too.
  const std::string shown = engine::engine_url_for_message(db);
  const auto refuse = [&](std::string_view what, std::string_view host) {
    return Status::error(fmt::format("--db {}: {} '{}' is not loopback: {}", shown, what,
                                     engine::without_url_passwords(host, db), kOnlyLoopback));
  };
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  bool names_host = false, names_hostaddr = false, names_service = false, names_socket = false;
  for (std::string_view hostport : split(authority, ',')) {
    const std::string host = percent_decoded(without_port(hostport));
    if (host.empty()) continue;
    names_host = true;
    if (!(postgres ? pg_host_is_local(host) : is_loopback_host(host))) return refuse("host", host);
  }
  if (const std::size_t q = rest.find('?'); q != std::string_view::npos) {
    for (std::string_view param : split(rest.substr(q + 1), '&')) {
      const std::size_t eq = param.find('=');
      const std::string key = percent_decoded(param.substr(0, eq));
      const std::string value = eq == std::string_view::npos ? "" : percent_decoded(param.substr(eq + 1));
      if (!postgres) {  // MariaDB's URL takes ?socket= alone (a path)
        names_socket = names_socket || key == "socket";
        continue;
      }
      if (key == "host") {
        for (std::string_view h : split(value, ','))
          if (!pg_host_is_local(h)) return refuse("host", h);
        names_host = names_host || !value.empty();
      } else if (key == "hostaddr") {
        for (std::string_view h : split(value, ','))
          if (!h.empty() && !is_loopback_host(h)) return refuse("hostaddr", h);
        names_hostaddr = true;
      } else if (key == "service") {
        names_service = true;
      }
    }
  }
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (postgres) {
    if (names_service || !env("PGSERVICE").empty())
      return Status::error(fmt::format("--db {}: a connection service (service= or PGSERVICE) can name any host; give the "
                                       "host in the URL instead, and unset PGSERVICE",
                                       shown));
    if (!names_host)
      for (std::string_view h : split(env("PGHOST"), ','))
        if (!pg_host_is_local(h)) return refuse("PGHOST", h);
    if (!names_hostaddr)
      for (std::string_view h : split(env("PGHOSTADDR"), ','))
        if (!h.empty() && !is_loopback_host(h)) return refuse("PGHOSTADDR", h);
  } else if (!names_host && !names_socket && !env("MYSQL_HOST").empty() && !is_loopback_host(env("MYSQL_HOST"))) {
    return refuse("MYSQL_HOST", env("MYSQL_HOST"));
  }
  return Status::OK();
}

}  // namespace twice::blackbox
