// SQLite's process-wide settings for twice's runs, applied once, before
// SQLite initializes (env/journal_vfs.cpp asks for them before it registers
// its VFS, which is before any run's connection opens).
//
// What they change: memory bookkeeping only (issue #12: Debian's SQLite is
// built without lookaside, so each statement makes dozens of malloc() calls).
// - SQLITE_CONFIG_MEMSTATUS off: SQLite stops counting the bytes it
//   allocates, which took a process-wide mutex around every allocation.
//   Nothing in twice reads sqlite3_memory_used() or sets a heap limit.
// - SQLITE_CONFIG_MALLOC: blocks from per-thread free lists
//   (memory/free_lists.h: power-of-two classes up to 4 KiB and one for the
//   page cache's lines), never handed back before the thread ends; larger
//   ones are malloc()'s. A run frees and takes the same sizes over and over.
//   Not under ASan or TSan, whose checks of SQLite's memory need malloc() itself.
// - SQLITE_CONFIG_PAGECACHE with no memory and no lines: a connection's page
//   cache takes a buffer per page it reads, instead of laying out twenty at
//   once when it opens. That bulk layout wrote every line's header, and so
//   faulted in each page of it: a third of the page faults of a cell's child
//   process, which opens its connections afresh (twice run: 658,000 page
//   faults became 567,000).
// Locking, journaling and every answer a statement gives are untouched. If
// SQLite was initialized first (a library of the process opened a database
// before twice did), the settings are refused and SQLite keeps its defaults:
// slower, the same answers.
// Threads: apply_sqlite_settings() is safe from any thread (std::call_once);
// the allocator's lists are per thread, and a block may be freed on another
// thread than the one that took it.
#pragma once

#include <sqlite3.h>

namespace twice::env {

void apply_sqlite_settings();
// The free-list allocator itself, for its tests.
const sqlite3_mem_methods& free_list_allocator();

}  // namespace twice::env
