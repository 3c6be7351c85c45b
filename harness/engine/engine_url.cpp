#include "engine/engine_url.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "engine/mariadb_protocol.h"

namespace twice::engine {
namespace {

constexpr std::string_view kMask = "***";
// Where libpq's or Connector/C's URL parser may cut a password written
// unencoded: "pa/ss" gives libpq the host "u" and the port "pa".
constexpr std::string_view kCutAt = "/?@:&=#;, '\"";
// A part shorter than this is masked only where the whole password stands:
// "pw" hidden in every word would leave no message to read.
constexpr std::size_t kShortestPart = 3;

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

// libpq's reading of `conninfo` (a URI or key=value pairs); null when it cannot read it.
PQconninfoOption* libpq_reading(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &err);
  if (err) PQfreemem(err);
  return options;
}

// The password libpq reads out of `conninfo`, if any.
std::optional<std::string> libpq_password(const std::string& conninfo) {
  PQconninfoOption* options = libpq_reading(conninfo);
  if (!options) return std::nullopt;
  std::optional<std::string> found;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (std::string_view(o->keyword) == "password" && o->val) found = o->val;
  PQconninfoFree(options);
  return found;
}

// Whether libpq reads a password out of `conninfo`; true when it cannot parse it.
bool pg_has_password(const std::string& conninfo) {
  PQconninfoOption* options = libpq_reading(conninfo);
  if (!options) return true;
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
  PQconninfoOption* options = libpq_reading(conninfo);
  if (!options) return "postgresql://";
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

// The spans a user's password may take as written, "secret" in
// scheme://user:secret@host: from the ':' before the first '@' to an '@' that
// may end it. Unencoded, "pa@ss", "pa/ss" and "pa?ss" read differently to
// each parser (libpq stops at the first '@' or '/', Connector/C at the last
// '@' before the first '/' or '?'), so every reading is one: the last '@'
// before the first '/' after the first '@', before the first '?' after it,
// and the last '@' of all (the widest, last).
std::vector<std::pair<std::size_t, std::size_t>> written_user_passwords(std::string_view url) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  // Without "://" (a mistyped "postgres//app:pw@db", "mysql:app:pw@db") the
  // user's part starts after the last '/' before the first '@', or at the
  // start: a password there is still one, masked with all it may include.
  const std::size_t scheme = url.find("://");
  std::size_t from = 0;
  if (scheme != std::string_view::npos) {
    from = scheme + 3;
  } else if (const std::size_t at = url.find('@'); at != std::string_view::npos) {
    const std::size_t slash = url.substr(0, at).rfind('/');
    from = slash == std::string_view::npos ? 0 : slash + 1;
  }
  const std::size_t first_at = url.find('@', from);
  const std::size_t colon = url.find(':', from);
  if (first_at == std::string_view::npos || colon > first_at) return out;
  for (const std::size_t stop : {url.find('/', first_at), url.find('?', first_at), std::string_view::npos}) {
    const std::size_t at = url.substr(0, stop).rfind('@');
    const std::pair span(colon + 1, at);
    if (std::find(out.begin(), out.end(), span) == out.end()) out.push_back(span);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

// One key=value of a URL's query (?a=b&c=d) or of libpq's key=value pairs, as written.
struct WrittenParameter {
  std::size_t begin = 0, end = 0;  // its span in the text, key to value
  std::string_view key, value;     // the value without its quotes
};

constexpr std::string_view kParameterSeparators = "?& \t";

// Whether a parameter, "key=", starts at `at` of `url`. A value ends at a
// separator only where one starts: in "password=pass&word&sslmode=require"
// the first '&' is the value's own.
bool parameter_starts(std::string_view url, std::size_t at) {
  std::size_t end = at;
  while (end < url.size() && (std::isalnum(static_cast<unsigned char>(url[end])) || url[end] == '_' || url[end] == '%'))
    ++end;
  return end > at && end < url.size() && url[end] == '=';
}

// Every key=value of `url` as written, whichever part it stands in.
std::vector<WrittenParameter> written_parameters(std::string_view url) {
  std::vector<WrittenParameter> out;
  std::size_t i = 0;
  while (i < url.size()) {
    if (!parameter_starts(url, i)) {
      // Not a key=value here (a scheme, a host, a path): on to the next separator.
      i = std::min(url.find_first_of(kParameterSeparators, i), url.size()) + 1;
      continue;
    }
    const std::size_t key_end = url.find('=', i);
    WrittenParameter p;
    p.begin = i;
    p.key = url.substr(i, key_end - i);
    const std::size_t from = key_end + 1;
    if (from < url.size() && url[from] == '\'') {
      // libpq's quoted value, backslash escapes inside.
      std::size_t j = from + 1;
      while (j < url.size() && url[j] != '\'') j += url[j] == '\\' ? 2 : 1;
      p.value = url.substr(from + 1, std::min(j, url.size()) - from - 1);
      p.end = std::min(j + 1, url.size());
    } else {
      p.end = from;
      while ((p.end = std::min(url.find_first_of("& \t", p.end), url.size())) < url.size() &&
             !parameter_starts(url, p.end + 1))
        ++p.end;
      p.value = url.substr(from, p.end - from);
    }
    out.push_back(p);
    i = p.end;
    while (i < url.size() && kParameterSeparators.find(url[i]) != std::string_view::npos) ++i;
  }
  return out;
}

bool is_password_key(std::string_view written) {
  std::string key = percent_decoded(std::string(written));
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  return key == "password" || key == "pass" || key == "pwd";
}

// `url` as written, without its user's ":password" and its password= / pass=
// / pwd= parameters: for text neither library reads as a URL.
std::string written_without_password(std::string url) {
  const std::vector<WrittenParameter> parameters = written_parameters(url);
  for (auto p = parameters.rbegin(); p != parameters.rend(); ++p) {
    if (!is_password_key(p->key)) continue;
    std::size_t begin = p->begin, end = p->end;
    if (end < url.size() && std::string_view("& \t").find(url[end]) != std::string_view::npos) ++end;
    else if (begin > 0 && kParameterSeparators.find(url[begin - 1]) != std::string_view::npos) --begin;
    url.erase(begin, end - begin);
  }
  if (const auto spans = written_user_passwords(url); !spans.empty())
    url.erase(spans.back().first - 1, spans.back().second - spans.back().first + 1);
  return url;
}

// Every password `url` holds: as written (the user's, password= / pass= /
// pwd= parameters), decoded, and as libpq or Connector/C read it.
std::vector<std::string> passwords_in(const std::string& url) {
  std::vector<std::string> out;
  const auto add = [&out](std::string_view written) {
    if (written.empty()) return;
    out.emplace_back(written);
    out.push_back(percent_decoded(std::string(written)));
  };
  for (const auto& [begin, end] : written_user_passwords(url)) add(std::string_view(url).substr(begin, end - begin));
  for (const WrittenParameter& p : written_parameters(url))
    if (is_password_key(p.key)) add(p.value);
  if (url.starts_with("mysql://")) {
    MariadbAddress at;
    std::string error;
    if (parse_mariadb_url(url, at, error)) add(at.password);
  } else if (const std::optional<std::string> read = libpq_password(url)) {
    add(*read);
  }
  return out;
}

// Each of `passwords`, and each part of one between kCutAt's characters, the
// longest first, so that none is left half shown.
std::vector<std::string> needles_of(const std::vector<std::string>& passwords) {
  std::vector<std::string> needles;
  for (const std::string& password : passwords) {
    if (password.empty()) continue;
    needles.push_back(password);
    std::size_t from = 0;
    while (from < password.size()) {
      const std::size_t cut = std::min(password.find_first_of(kCutAt, from), password.size());
      if (cut - from >= kShortestPart) needles.push_back(password.substr(from, cut - from));
      from = cut + 1;
    }
  }
  std::sort(needles.begin(), needles.end(),
            [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() > b.size() : a < b; });
  needles.erase(std::unique(needles.begin(), needles.end()), needles.end());
  return needles;
}

// `text` with each needle of `passwords` shown as kMask.
std::string masked(std::string_view text, const std::vector<std::string>& passwords) {
  std::string out(text);
  for (const std::string& needle : needles_of(passwords)) {
    for (std::size_t at = out.find(needle); at != std::string::npos; at = out.find(needle, at + kMask.size()))
      out.replace(at, needle.size(), kMask);
  }
  return out;
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
  if (!parse_mariadb_url(url, at, error)) {
    // Not one Connector/C is given: as written, without what reads as a password.
    std::string out = written_without_password(url);
    return {out, out == url ? "" : "MYSQL_PWD"};
  }
  if (at.password.empty()) return {url, ""};
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

std::string engine_url_for_message(const std::string& url) {
  if (url.empty()) return url;
  std::string shown;
  if (url.starts_with("mysql://")) {
    shown = printable_mariadb_url(url).url;
  } else if (PQconninfoOption* options = libpq_reading(url)) {
    PQconninfoFree(options);
    shown = printable_postgres_url(url).url;
  } else {
    return written_without_password(url);
  }
  // A password the library reads as something else ("pa/ss": libpq's port
  // "pa", "pa@h/ss@db": Connector/C's host "h" and database "ss@db") is
  // still a password as written: then the URL as written, without it.
  const std::vector<std::string> needles = needles_of(passwords_in(url));
  const bool still_shown = std::any_of(needles.begin(), needles.end(), [&](const std::string& needle) {
    return shown.find(needle) != std::string::npos;
  });
  return still_shown ? written_without_password(url) : shown;
}

std::string without_url_passwords(std::string_view text, const std::string& url) {
  if (url.empty()) return std::string(text);
  const std::string shown = engine_url_for_message(url);
  const std::vector<std::string> passwords = passwords_in(url);
  // The URL itself, where it stands whole, as a message names it; the rest masked.
  std::string out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t at = text.find(url, from);
    out += masked(text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from), passwords);
    if (at == std::string_view::npos) return out;
    out += shown;
    from = at + url.size();
  }
}

std::string without_password(std::string_view text, std::string_view password) {
  return masked(text, {std::string(password)});
}

}  // namespace twice::engine
