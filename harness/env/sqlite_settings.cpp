#include "env/sqlite_settings.h"

#include <cstddef>
#include <mutex>

#include <sqlite3.h>

#include "memory/free_lists.h"

namespace twice::env {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// SQLite's allocator on memory/free_lists.h; SQLite's sizes are ints.
void* x_malloc(int n) { return n > 0 ? memory::take(static_cast<std::size_t>(n)) : nullptr; }
void x_free(void* p) { memory::give(p); }
int x_size(void* p) { return static_cast<int>(memory::requested(p)); }
void* x_realloc(void* p, int n) {
  if (n <= 0) {
    x_free(p);
    return nullptr;
  }
  return memory::grow(p, static_cast<std::size_t>(n));
}
int x_roundup(int n) { return (n + 7) & ~7; }
int x_init(void*) { return SQLITE_OK; }
void x_shutdown(void*) {}

const sqlite3_mem_methods kFreeLists = {x_malloc, x_free, x_realloc, x_size, x_roundup, x_init, x_shutdown, nullptr};

}  // namespace

void apply_sqlite_settings() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    (void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, nullptr, 0, 0);
    // Under a sanitizer SQLite keeps malloc(), so that its memory is checked.
    if (!kSanitized) (void)sqlite3_config(SQLITE_CONFIG_MALLOC, &kFreeLists);
  });
}

const sqlite3_mem_methods& free_list_allocator() { return kFreeLists; }

}  // namespace twice::env
