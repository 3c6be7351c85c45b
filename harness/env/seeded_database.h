// Seeded databases: the database file a run starts from (the handler's
// schema, the scenario's orders and accounts), made once and copied for every
// later run that starts from the same one.
//
// Executing a schema's CREATE statements and the seed inserts costs several
// transactions and a parse of every statement, as much as a short run; a
// copy of the resulting file is one write, and SQLite reads it exactly as it
// reads the file it made: same bytes, same pages, same rowids.
//
// Threads: callable from several threads at once (explorer cells); the
// images are shared by the whole process.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <sqlite3.h>

namespace twice::env {

// Creates the database file `path` (which must not exist) as `seed` leaves a
// fresh database opened with open_database(). The first call for a `key` runs
// `seed` on a scratch file and keeps the file's bytes; later calls with an
// equal key write those bytes to `path` and do not call `seed`. So `key` must
// name everything `seed` depends on. An exception from `seed` propagates, with
// no file left behind and nothing kept for the key.
void create_seeded_database(const std::string& path, const std::string& key,
                            const std::function<void(sqlite3*)>& seed);

// The bytes create_seeded_database() writes for `key`, seeding them on the
// first call as it does: for a caller that resets a file it keeps open
// (env/run_database.h) instead of creating one per run.
std::shared_ptr<const std::string> seeded_image(const std::string& key, const std::function<void(sqlite3*)>& seed);

}  // namespace twice::env
