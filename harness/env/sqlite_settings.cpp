#include "env/sqlite_settings.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <sqlite3.h>

namespace twice::env {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Blocks of 32, 64, ... 4096 bytes, header included; a larger request (a
// page of the page cache) goes to malloc() as it is.
constexpr int kMinShift = 5;
constexpr int kMaxShift = 12;
constexpr int kClasses = kMaxShift - kMinShift + 1;
constexpr std::size_t kHeader = 16;  // keeps malloc()'s 16-byte alignment
constexpr std::uint32_t kLarge = 0xffffffff;

struct Header {
  std::uint32_t size_class;  // kLarge: from malloc() as it is
  std::uint32_t requested;   // what SQLite asked for: xSize() answers it
};

// A free block's first bytes hold the next free block of its class, where
// its header was. Read and written with memcpy: the header and the link are
// two types over the same bytes, and memcpy is what the language lets alias.
void* next_of(void* block) {
  void* next;
  std::memcpy(&next, block, sizeof next);
  return next;
}
void set_next(void* block, void* next) { std::memcpy(block, &next, sizeof next); }

// This thread's free blocks by class. Trivially destructible, so that it is
// still there for whatever frees during the thread's exit (a thread_local
// RunDatabase closing its connections); Drain empties it first and from then
// on frees go to free(). A block freed on another thread than the one that
// took it joins the freeing thread's list: memory moves, none is lost.
struct FreeLists {
  void* heads[kClasses];
  bool draining;
  bool drain_registered;
};
thread_local FreeLists lists{};

struct Drain {
  ~Drain() {
    lists.draining = true;
    for (void*& head : lists.heads)
      while (head) {
        void* b = head;
        head = next_of(b);
        std::free(b);
      }
  }
};

void register_drain() {
  thread_local Drain drain;  // constructed now, after whatever thread_local owns a connection
  (void)drain;
  lists.drain_registered = true;
}

// The smallest class whose blocks hold `total` bytes (total <= 2^kMaxShift).
int class_of(std::size_t total) {
  const int shift = static_cast<int>(std::bit_width(total - 1));  // 2^shift >= total
  return shift > kMinShift ? shift - kMinShift : 0;
}

Header* header_of(void* p) { return reinterpret_cast<Header*>(static_cast<char*>(p) - kHeader); }

void* x_malloc(int n) {
  if (n <= 0) return nullptr;
  const std::size_t total = static_cast<std::size_t>(n) + kHeader;
  void* block = nullptr;
  std::uint32_t size_class = kLarge;
  if (total <= (std::size_t{1} << kMaxShift) && !lists.draining) {
    if (!lists.drain_registered) register_drain();
    const int c = class_of(total);
    size_class = static_cast<std::uint32_t>(c);
    void*& head = lists.heads[c];
    if (head) {
      block = head;
      head = next_of(block);
    } else {
      block = std::malloc(std::size_t{1} << (kMinShift + c));
    }
  } else {
    block = std::malloc(total);
  }
  if (!block) return nullptr;
  auto* h = static_cast<Header*>(block);
  h->size_class = size_class;
  h->requested = static_cast<std::uint32_t>(n);
  return static_cast<char*>(block) + kHeader;
}

void x_free(void* p) {
  if (!p) return;
  Header* h = header_of(p);
  if (h->size_class == kLarge || lists.draining || !lists.drain_registered) {
    std::free(h);
    return;
  }
  // The link overwrites the header: its class is read first.
  const std::uint32_t c = h->size_class;
  set_next(h, lists.heads[c]);
  lists.heads[c] = h;
}

int x_size(void* p) { return p ? static_cast<int>(header_of(p)->requested) : 0; }

void* x_realloc(void* p, int n) {
  if (!p) return x_malloc(n);
  if (n <= 0) {
    x_free(p);
    return nullptr;
  }
  Header* h = header_of(p);
  // Room enough in its block: it stays where it is.
  if (h->size_class != kLarge &&
      static_cast<std::size_t>(n) + kHeader <= (std::size_t{1} << (kMinShift + static_cast<int>(h->size_class)))) {
    h->requested = static_cast<std::uint32_t>(n);
    return p;
  }
  void* q = x_malloc(n);
  if (!q) return nullptr;
  std::memcpy(q, p, std::min<std::size_t>(h->requested, static_cast<std::size_t>(n)));
  x_free(p);
  return q;
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
