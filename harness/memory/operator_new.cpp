// The C++ allocation functions of twice's own programs (the twice command,
// its tests and benchmarks) on the per-thread free lists (memory/free_lists.h).
// Linked into those executables only, never into the library a user's
// program links (twice::twice): replacing operator new is a program's choice.
// The twice command exports its symbols for plugins, so a plugin's handlers
// allocate and free on these same functions.
//
// The aligned forms (operator new(size_t, align_val_t)) stay libstdc++'s:
// they take memory from aligned_alloc() and give it back to free(), apart
// from these. Under ASan or TSan this file defines nothing.
#include <cstddef>
#include <new>

#include "memory/free_lists.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

namespace {

void* take_or_throw(std::size_t n) {
  if (n == 0) n = 1;
  for (;;) {
    if (void* p = twice::memory::take(n)) return p;
    const std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void* take_or_null(std::size_t n) noexcept {
  try {
    return take_or_throw(n);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

void* operator new(std::size_t n) { return take_or_throw(n); }
void* operator new[](std::size_t n) { return take_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return take_or_null(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return take_or_null(n); }
void operator delete(void* p) noexcept { twice::memory::give(p); }
void operator delete[](void* p) noexcept { twice::memory::give(p); }
void operator delete(void* p, std::size_t) noexcept { twice::memory::give(p); }
void operator delete[](void* p, std::size_t) noexcept { twice::memory::give(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { twice::memory::give(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { twice::memory::give(p); }

#endif
