// Confinement: keeps a handler's SQL inside the run's database. An SQLite
// authorizer on every connection a handler's statements (and its schema) run
// on denies ATTACH and DETACH (a file outside the run, outliving it) and the
// PRAGMAs that change journaling or locking (journal_mode=WAL leaves -wal and
// -shm files behind, and changes what the scheduler's locking model assumes).
// A denied statement fails to prepare with SQLITE_AUTH; the handler gets an
// error Status saying why, and the trace shows it.
//
// Threads: confine() per connection, on the thread that owns it.
#pragma once

#include <string>

#include <sqlite3.h>

namespace twice::env {

// Installs the authorizer; call after the harness's own PRAGMAs. When
// `altered` is given, the authorizer sets it once a statement that changes the
// connection itself rather than the database (a PRAGMA given a value, a TEMP
// table, view, index or trigger) is prepared on it: such a connection must
// not serve a later run (env/run_database.h closes it instead).
void confine(sqlite3* conn, bool* altered = nullptr);

// The error text for a statement that failed to prepare on `conn`: SQLite's
// own, and for a denial what twice refuses and why.
std::string prepare_error(sqlite3* conn);

}  // namespace twice::env
