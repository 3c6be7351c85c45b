#include "engine/engine_url.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "engine/mariadb_protocol.h"

namespace twice::engine {
namespace {

// "user:secret@host" -> "user@host" in the URL's part from `from` to the
// first of `stops`, its user's part ending at the first (or the last) '@'.
void drop_user_password(std::string& url, std::size_t from, std::string_view stops, bool last_at) {
  const std::size_t stop = std::min(url.find_first_of(stops, from), url.size());
  const std::string_view authority(url.data() + from, stop - from);
  const std::size_t at = last_at ? authority.rfind('@') : authority.find('@');
  if (at == std::string_view::npos) return;
  const std::size_t colon = authority.substr(0, at).find(':');
  if (colon != std::string_view::npos) url.erase(from + colon, at - colon);
}

// Whether libpq reads a password out of `conninfo`; true when it cannot parse it.
bool pg_has_password(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &err);
  if (!options) {
    if (err) PQfreemem(err);
    return true;
  }
  bool found = false;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (std::string_view(o->keyword) == "password" && o->val) found = true;
  PQconninfoFree(options);
  return found;
}

// `conninfo`'s settings, but its password, as libpq reads them, written as a
// URL of parameters alone (postgresql://?host=db&user=app), the one form
// `--engine-url` takes.
std::string pg_url_without_password(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &err);
  if (!options) {
    if (err) PQfreemem(err);
    return "postgresql://";
  }
  std::string out;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (!o->val || std::string_view(o->keyword) == "password") continue;
    out += (out.empty() ? "?" : "&") + std::string(o->keyword) + "=";
    for (const unsigned char c : std::string_view(o->val)) {
      if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += static_cast<char>(c);
      else out += fmt::format("%{:02X}", c);
    }
  }
  PQconninfoFree(options);
  return "postgresql://" + out;
}

PrintableUrl printable_postgres_url(const std::string& url) {
  if (!pg_has_password(url)) return {url, ""};
  std::string out = url;
  if (const std::size_t scheme = out.find("://"); scheme != std::string::npos) {
    // libpq's URI: the user's credentials end at the first '@' before any '/'.
    drop_user_password(out, scheme + 3, "/", false);
    // ?password=... among the parameters.
    if (const std::size_t query = out.find('?', scheme + 3); query != std::string::npos) {
      std::string kept;
      std::size_t from = query + 1;
      while (from <= out.size()) {
        const std::size_t end = std::min(out.find('&', from), out.size());
        const std::string_view parameter(out.data() + from, end - from);
        if (!parameter.starts_with("password=") && !parameter.empty())
          kept += (kept.empty() ? "" : "&") + std::string(parameter);
        from = end + 1;
      }
      out.resize(query);
      if (!kept.empty()) out += "?" + kept;
    }
  }
  // A spelling the above does not take apart (key=value pairs, an encoded
  // key): libpq's own reading of it, without the password.
  if (pg_has_password(out)) out = pg_url_without_password(url);
  return {out, "PGPASSWORD"};
}

PrintableUrl printable_mariadb_url(const std::string& url) {
  MariadbAddress at;
  std::string error;
  if (!parse_mariadb_url(url, at, error) || at.password.empty()) return {url, ""};
  // As parse_mariadb_url reads it: the user's part ends at the last '@'
  // before the first '/' or '?'.
  std::string out = url;
  drop_user_password(out, std::string_view("mysql://").size(), "/?", true);
  return {out, "MYSQL_PWD"};
}

}  // namespace

PrintableUrl printable_engine_url(Engine engine, const std::string& url) {
  if (url.empty()) return {};
  if (engine == Engine::kPostgres) return printable_postgres_url(url);
  if (engine == Engine::kMariadb) return printable_mariadb_url(url);
  return {url, ""};
}

}  // namespace twice::engine
