// SQLite's process-wide settings for twice's runs, applied once, before
// SQLite initializes (env/journal_vfs.cpp asks for them before it registers
// its VFS, which is before any run's connection opens).
//
// What they change: memory bookkeeping only. SQLITE_CONFIG_MEMSTATUS off:
// SQLite stops counting the bytes it allocates, which took a process-wide
// mutex around every allocation (about 450 lock pairs a schedule, issue #12).
// Nothing in twice reads sqlite3_memory_used() or sets a soft heap limit, the
// two things the counting serves. Locking, journaling and every answer a
// statement gives are untouched.
// If SQLite was initialized first (another library of the process opened a
// database before twice), the settings are refused and SQLite keeps its
// defaults: slower, the same answers.
// Thread-safe (std::call_once).
#pragma once

namespace twice::env {

void apply_sqlite_settings();

}  // namespace twice::env
