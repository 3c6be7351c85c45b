// BusyRule: how the SQLite Db answers a statement that meets another
// connection's lock (SQLITE_BUSY). An internal switch, read once per process
// from TWICE_SQLITE_BUSY, until it is decided which becomes the only rule:
// the second changes interleavings and so some verdicts (docs/architecture.md).
//
//   kWaitThenVictim (unset, the default): every statement waits until another
//     task releases its locks; when every task waits, the scheduler answers
//     one of them, drawn like any choice, with SQLITE_BUSY, a COMMIT too (whose
//     transaction the handler then rolls back).
//   kAsSqlite (TWICE_SQLITE_BUSY=sqlite): SQLite's own answers with a busy
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

// TWICE_SQLITE_BUSY: unset or empty -> kWaitThenVictim, "sqlite" -> kAsSqlite.
// Any other value is refused at the first call (std::invalid_argument, naming
// the variable and the values it takes).
BusyRule busy_rule();

}  // namespace twice::env
