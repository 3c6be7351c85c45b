// BusyRule: how the SQLite Db answers a statement that meets another
// connection's lock (SQLITE_BUSY). SQLite's own answers are the rule (the
// drawn-victim rule before it could refuse a COMMIT and made the checker report
// a false ack_before_commit; switching changed 23 cells' runs, see
// docs/architecture.md). The old rule stays reachable for a while, read once per process from TWICE_SQLITE_BUSY=victim, only to
// compare the two; a replay is the same run only under the same rule.
//
//   kWaitThenVictim (TWICE_SQLITE_BUSY=victim): every statement waits until another
//     task releases its locks; when every task waits, the scheduler answers
//     one of them, drawn like any choice, with SQLITE_BUSY, a COMMIT too (whose
//     transaction the handler then rolls back).
//   kAsSqlite (unset, the default; or =sqlite): SQLite's own answers with a busy
//     handler (tests/env/sqlite_locking_test.cpp shows them on two real
//     connections): a transaction that holds a read lock and tries to write
//     while another holds the write lock gets SQLITE_BUSY at once, as SQLite
//     calls no busy handler there (waiting could only deadlock); every other
//     statement waits, a COMMIT for the readers to let go with its transaction
//     open; and a statement whose first prepare meets a lock (reading the
//     schema while another connection commits) waits too, instead of failing
//     with a plain error.
// Safe from any thread once read.
#pragma once

namespace twice::env {

enum class BusyRule { kWaitThenVictim, kAsSqlite };

// TWICE_SQLITE_BUSY: unset, empty or "sqlite" -> kAsSqlite, "victim" -> kWaitThenVictim.
// Any other value is refused at the first call (std::invalid_argument, naming
// the variable and the values it takes).
BusyRule busy_rule();

}  // namespace twice::env
