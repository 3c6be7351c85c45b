// HeldFile: the bytes of a run's database file, kept in this process's memory
// and read and written there by every connection opened on that file through
// the twice-unix VFS (env/journal_vfs.h), instead of through the kernel.
//
// Why: a run's file is read and written only by connections of the process
// that made it (its name is fresh per process), yet each read of a page after
// another connection's commit was a pread, each write a pwrite, each look at
// the size an fstat: 4.1 million system calls in the main job (issue #12).
// SQLite cannot tell: the same bytes answer the same offsets, a read past the
// end is short and zero-filled as unix's, and the locks are the lock ledger's
// either way (env/lock_ledger.h). The file on disk stays (its name keeps the
// path taken, and unix's own handle answers the sector size and device
// characteristics as before) but holds the bytes it was created with only;
// what reads a held file must go through twice-unix.
// Only a file hold_in_memory() was called for is held: any other file opened through
// twice-unix (a benchmark's, a test's, a seeding scratch file) stays unix's.
//
// Threads: the table of held files has a mutex; a file's bytes are read and
// written by the thread using its connections (a run's own).
#pragma once

#include <memory>
#include <string>

namespace twice::env {

struct HeldBytes {
  std::string bytes;
};

// From now on `path` (as SQLite names it to the VFS: the path opened) is held
// with `bytes` as its content; connections opened on it before are not.
void hold_in_memory(const std::string& path, std::string bytes);
// The held content of `path`, or null when it is not held.
std::shared_ptr<HeldBytes> held_in_memory(const std::string& path);
// `path` is no longer held (its file is being removed).
void stop_holding(const std::string& path);

}  // namespace twice::env
