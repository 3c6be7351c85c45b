#include "memory/free_lists.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace twice::memory {

namespace {

constexpr int kMinShift = 5;
constexpr int kMaxShift = 12;
constexpr int kPageClass = kMaxShift - kMinShift + 1;
constexpr std::size_t kPageLine = 5 * 1024;
constexpr int kClasses = kPageClass + 1;
constexpr std::size_t kHeader = 16;  // keeps malloc()'s 16-byte alignment
constexpr std::uint32_t kLarge = 0xffffffff;

struct Header {
  std::uint32_t size_class;  // kLarge: from malloc() as it is
  std::uint32_t requested;   // what was asked for
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
// that owns a connection or a string); Drain empties it first and from then
// on that thread's frees go to free().
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
  lists.drain_registered = true;  // first: the Drain's own construction must not come here again
  thread_local Drain drain;       // constructed now, after whatever thread_local was built before it
  (void)drain;
}

// The smallest class whose blocks hold `total` bytes (total <= kPageLine).
int class_of(std::size_t total) {
  if (total > (std::size_t{1} << kMaxShift)) return kPageClass;
  const int shift = static_cast<int>(std::bit_width(total - 1));  // 2^shift >= total
  return shift > kMinShift ? shift - kMinShift : 0;
}

std::size_t block_size(std::uint32_t size_class) {
  return size_class == kPageClass ? kPageLine : std::size_t{1} << (kMinShift + static_cast<int>(size_class));
}

Header* header_of(const void* p) {
  return reinterpret_cast<Header*>(const_cast<char*>(static_cast<const char*>(p)) - kHeader);
}

std::uint32_t clamp32(std::size_t n) {
  return static_cast<std::uint32_t>(std::min<std::size_t>(n, std::size_t{kLarge} - 1));
}

}  // namespace

void* take(std::size_t n) {
  if (n > SIZE_MAX - kHeader) return nullptr;
  const std::size_t total = n + kHeader;
  void* block = nullptr;
  std::uint32_t size_class = kLarge;
  if (total <= kPageLine && !lists.draining) {
    if (!lists.drain_registered) register_drain();
    const int c = class_of(total);
    size_class = static_cast<std::uint32_t>(c);
    void*& head = lists.heads[c];
    if (head) {
      block = head;
      head = next_of(block);
    } else {
      block = std::malloc(block_size(size_class));
    }
  } else {
    block = std::malloc(total);
  }
  if (!block) return nullptr;
  auto* h = static_cast<Header*>(block);
  h->size_class = size_class;
  h->requested = clamp32(n);
  return static_cast<char*>(block) + kHeader;
}

void give(void* p) noexcept {
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

std::size_t requested(const void* p) noexcept { return p ? header_of(p)->requested : 0; }

void* grow(void* p, std::size_t n) {
  if (!p) return take(n);
  Header* h = header_of(p);
  // Room enough in its block: it stays where it is.
  if (h->size_class != kLarge && n <= block_size(h->size_class) - kHeader) {
    h->requested = clamp32(n);
    return p;
  }
  void* q = take(n);
  if (!q) return nullptr;
  std::memcpy(q, p, std::min<std::size_t>(h->requested, n));
  give(p);
  return q;
}

}  // namespace twice::memory
