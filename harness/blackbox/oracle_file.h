// The oracle file of black-box mode: where the service under test keeps the
// truth, as a Schema (twice/schema.h) written in TOML: the setup SQL that
// (re)creates and seeds its tables before each run, the statements that seed
// one order and one account, and the oracle queries the checker reads after
// the run (credits, balances; optionally statuses, refunds, transitions,
// payloads, reversals) and the names of the order states. Format and an
// example: docs/black-box.md. Pure; thread-safe.
#pragma once

#include <string>

#include "twice/schema.h"
#include "twice/status_or.h"

namespace twice::blackbox {

// Reads `path`. Any error is one line "PATH:LINE: what; the fix": a TOML
// syntax error, an unknown key (with the known ones), a key that is not a
// string, a required query missing (setup_sql, insert_order_sql,
// insert_account_sql, credits_sql, balances_sql).
// The setup SQL is kept for every engine (setup_sql_for() answers it for
// SQLite, PostgreSQL and MariaDB alike): the file describes one database.
StatusOr<Schema> load_oracle(const std::string& path);

}  // namespace twice::blackbox
