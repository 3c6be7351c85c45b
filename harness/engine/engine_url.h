// The --engine-url of a run (and black-box mode's --db) as twice prints it:
// never with its password. Reports are kept as CI artifacts and CI logs are
// often public, so a replay command, an error line, a report's server and a
// client library's message that echoes the URL all go through here.
// A replay command must name the server the run used (another server, with
// other settings, can tell another story). The client libraries read a
// password the URL leaves out from the environment: libpq from PGPASSWORD
// (or ~/.pgpass), MariaDB's Connector/C from MYSQL_PWD, so the printed URL
// still connects where that is set.
// Pure; any thread.
#pragma once

#include <string>
#include <string_view>

#include "twice/engine.h"

namespace twice::engine {

struct PrintableUrl {
  std::string url;                // the URL without its password
  std::string password_variable;  // "PGPASSWORD" / "MYSQL_PWD" when a password was taken out, else empty
};

// `url` (postgres://... or mysql://...) with its password taken out: the
// user's ":password" and PostgreSQL's password= parameter; the rest stays as
// written. A PostgreSQL spelling that hides a password otherwise (key=value
// pairs, an encoded key) is written again from libpq's reading of it, as
// postgresql://?host=...&user=.... For a replay command: `url` is one a run
// connected with.
PrintableUrl printable_engine_url(Engine engine, const std::string& url);

// `url` as a message names the server: user@host:port/db, without its
// password, whatever `url` is (a URL of either engine, libpq's key=value
// pairs, or text that parses as neither, which an error is about). The
// engine is the URL's own (mysql:// is MariaDB's, what libpq reads is
// PostgreSQL's), not the --engine flag's: a URL given to the wrong engine
// must not print whole in the error that says so. What is not read as
// either loses its user's ":password" and its password= / pass= / pwd=
// parameters as written.
std::string engine_url_for_message(const std::string& url);

// `text` (a client library's message, an error that quotes `url`) with
// `url` shown as engine_url_for_message() shows it, and each password `url`
// holds, as written, decoded, or as the libraries read it, shown as ***,
// wherever it stands. libpq echoes a URI it cannot parse, a host or a port
// read out of a password that holds '@' or '/', and a bad percent-encoding;
// none of that may print the password.
std::string without_url_passwords(std::string_view text, const std::string& url);

// `text` with `password`, and each part of it between the characters a URL
// parser splits at ("pa/ss@w0rd": "pa", "ss", "w0rd", from three characters
// up), shown as ***. For a caller that holds a password out of its URL
// (MariadbAddress); without_url_passwords() does this for each one a URL holds.
std::string without_password(std::string_view text, std::string_view password);

}  // namespace twice::engine
