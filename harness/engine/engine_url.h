// The --engine-url of a run as a report may print it: without its password.
// Reports are kept as CI artifacts, and a replay command must name the server
// the run used (another server, with other settings, can tell another story).
// The client libraries read a password the URL leaves out from the
// environment: libpq from PGPASSWORD (or ~/.pgpass), MariaDB's Connector/C
// from MYSQL_PWD, so the printed URL still connects where that is set.
// Pure; any thread.
#pragma once

#include <string>

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
// postgresql://?host=...&user=....
PrintableUrl printable_engine_url(Engine engine, const std::string& url);

}  // namespace twice::engine
