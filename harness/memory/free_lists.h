// Per-thread free lists of small blocks: what SQLite's allocations
// (env/sqlite_settings.h) and, in twice's own programs, C++'s operator new
// (memory/operator_new.cpp) take memory from.
//
// A run takes and gives back the same sizes over and over: a schedule of
// unique-key+cas x concurrent-duplicates made about 124 operator new calls
// and 35 page-cache lines of 4.3 KiB, and glibc's malloc() and free() spent some 31,500
// instructions a schedule on them (its per-thread cache keeps only seven
// blocks a size). Here a take is about 30 instructions.
//
// Blocks of 32, 64, ... 4096 bytes, a 16-byte header included (so a block
// keeps malloc()'s 16-byte alignment), and one class of 5 KiB for the page
// cache's lines (a 4 KiB page with its headers). A larger request goes to
// malloc() as it is, with the same header. A free block joins the list of
// the thread that frees it (memory moves between threads, none is lost);
// the lists are never handed back to malloc() before their thread ends,
// when they are, and from then on that thread's blocks go to free().
// Under ASan or TSan nothing calls these: the sanitizers' checks need
// malloc() itself.
#pragma once

#include <cstddef>

namespace twice::memory {

// A block of at least `n` bytes (n > 0), 16-byte aligned; null if malloc() failed.
void* take(std::size_t n);
// Gives back a block from take() or grow(); null is ignored.
void give(void* p) noexcept;
// The `n` that take() or grow() was last asked for this block (at most 2^32 - 1).
std::size_t requested(const void* p) noexcept;
// `p` with room for `n` bytes: in place if its block holds them, else a new
// block with the first min(requested, n) bytes copied and `p` given back.
// Null (and `p` untouched) if malloc() failed.
void* grow(void* p, std::size_t n);

}  // namespace twice::memory
