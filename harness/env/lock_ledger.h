// LockLedger: which lock each connection of this process holds on a database
// file opened through the twice-unix VFS (env/journal_vfs.h), and whether the
// lock a connection was refused (SQLITE_BUSY) could be granted now.
//
// Why: a task whose statement meets SQLITE_BUSY waits (env/sqlite_db.h), and
// the scheduler must learn when its wait is over without retrying the
// statement, since a retry is a step of the run (sim/lock_wait.h). Between
// the connections of one process the kernel's fcntl locks never conflict;
// SQLite's unix VFS decides alone, from a table of its own per file
// (unixInodeInfo: the strongest lock held, how many hold SHARED). The ledger
// keeps that table itself: it answers the file's xLock, xUnlock and
// xCheckReservedLock with unixLock's in-process rules (os_unix.c) and never
// calls unix's, so no fcntl lock is taken (those calls were a third of the
// main job's system time, issue #12):
//   SHARED     is refused while another connection holds PENDING or EXCLUSIVE;
//   RESERVED   is refused while another holds RESERVED or more;
//   EXCLUSIVE  is refused while another holds RESERVED or more, or any other
//              holds SHARED. Refused after its PENDING step (the caller held
//              the strongest lock), the file keeps PENDING: new readers wait.
// A retry climbs from the connection's lock now (a refused BEGIN IMMEDIATE
// dropped back to none) through SHARED and RESERVED to the refused level, so
// grantable() checks every step of that climb. It tells whether the refused
// lock would be granted, not whether the statement then needs another lock
// that is held (an autocommit write refused SHARED may next meet RESERVED):
// such a retry waits again, as SQLite would. Locks of another process are
// not seen; no other process opens a run's file.
//
// Threads: a file's entry is read and changed by the thread using its
// connections (a run's own); the table of files has a mutex of its own.
#pragma once

#include <optional>

#include <sqlite3.h>

#include "sim/lock_wait.h"

namespace twice::env {

// For the twice-unix VFS (env/journal_vfs.cpp): the size of a file handle with
// room for the ledger's entry before unix's own handle of `unix_size` bytes.
int ledger_file_size(int unix_size);
// Opens a main database file through `unix_vfs` inside a ledger entry; the
// other files (journals) are opened by the caller, unwrapped.
int ledger_open(sqlite3_vfs* unix_vfs, const char* name, sqlite3_file* file, int flags, int* out_flags);

struct LedgerFile;

// The lock `conn`'s database file was last refused, as a wait the scheduler
// can ask (Scheduler::block_on_db). Valid while `conn` stays open.
class RefusedLock final : public sim::LockWait {
 public:
  // Takes what `conn` was refused since the last take: empty when nothing was
  // (the SQLITE_BUSY came from elsewhere, or `conn` is not on twice-unix;
  // the caller then waits until some lock is released, as before).
  static std::optional<RefusedLock> take(sqlite3* conn);
  bool grantable() const override;
  // grantable() reads the file's lock table, the lock this handle holds
  // (which does not change while its task waits) and the refused level:
  // waits on one file that agree on both levels answer alike.
  sim::LockWaitKey key() const override;
  // The lock level refused (SQLITE_LOCK_SHARED ... SQLITE_LOCK_EXCLUSIVE).
  int level() const { return level_; }

 private:
  RefusedLock(const LedgerFile* file, int level) : file_(file), level_(level) {}
  const LedgerFile* file_;
  int level_;
};

// The lock level `conn` holds on its database file (SQLITE_LOCK_NONE ...),
// or -1 when `conn` is not on twice-unix. For tests.
int held_lock(sqlite3* conn);
// Whether `conn` would be granted SHARED now, by unixLock's rule above (it
// holds SHARED or more already, or no other connection holds PENDING or
// EXCLUSIVE); empty when `conn` is not on twice-unix. Asks without locking:
// the pool asks it before handing out a kept connection (env/sqlite_db.h).
std::optional<bool> shared_grantable(sqlite3* conn);

}  // namespace twice::env
