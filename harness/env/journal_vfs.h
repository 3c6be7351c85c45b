// JournalVfs: SQLite's own "unix" VFS, with one question answered without the
// kernel: does the database's rollback journal (or WAL file) exist?
//
// Why: every time a connection takes a SHARED lock, SQLite asks whether
// "<db>-journal" exists (a hot journal to roll back) and whether "<db>-wal"
// does. Both are absent in a run (the journal is in memory, WAL is denied:
// env/confinement.h), and each answer was a path walk in the kernel that
// allocates a negative dentry: 22% of `twice run`'s time (perf, issue #12).
// This VFS records every journal and WAL file that a connection opened
// through it creates (xOpen) and removes (xDelete), and answers from that
// record for the files of databases opened through it. Reading and writing
// are unix's own, untouched; a database file's lock calls are answered by
// env/lock_ledger.h, which keeps unix's in-process lock table itself and
// applies unixLock's rules to it, so no fcntl lock is ever taken (within one
// process fcntl never refuses, so unix's answers came from that table alone).
// A journal that only another process or remove_database() could make or
// remove is no concern: the runs' database names are fresh per process, and
// nothing else writes into them.
//
// Threads: safe from any thread (the record has its own mutex).
#pragma once

#include <string>

namespace twice::env {

// The VFS's name for sqlite3_open_v2(), registered on first call.
const char* journal_vfs();
// Forgets what is recorded for the database `path` (its files were removed).
void forget_journals(const std::string& path);

}  // namespace twice::env
