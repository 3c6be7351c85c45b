// The free-list allocator SQLite runs on (env/sqlite_settings.h): every live
// block keeps its bytes while others are taken, grown, shrunk and given back,
// on one thread and across threads; xSize says what was asked for.
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "env/sqlite_settings.h"

namespace twice::env {
namespace {

struct Block {
  unsigned char* p = nullptr;
  int size = 0;
  unsigned char fill = 0;
};

void check(const Block& b) {
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(b.p) % 16, 0u);
  ASSERT_EQ(free_list_allocator().xSize(b.p), b.size);
  for (int i = 0; i < b.size; ++i) ASSERT_EQ(b.p[i], b.fill) << "byte " << i << " of a block of " << b.size;
}

// A random walk of takes, grows, shrinks and frees over sizes on both sides
// of every class boundary, of the 4 KiB power-of-two limit and of the 5 KiB
// page lines' class.
void walk(std::uint32_t seed, int steps) {
  const sqlite3_mem_methods& m = free_list_allocator();
  std::mt19937 rng(seed);
  std::vector<Block> live;
  auto size = [&] {
    switch (rng() % 3) {
      case 0: return static_cast<int>(1 + rng() % 64);
      case 1: return static_cast<int>(1 + rng() % 5300);
      default: return static_cast<int>(1 + rng() % 20000);
    }
  };
  for (int step = 0; step < steps; ++step) {
    const unsigned op = rng() % 4;
    if (op <= 1 || live.empty()) {
      Block b{nullptr, m.xRoundup(size()), static_cast<unsigned char>(rng())};
      b.p = static_cast<unsigned char*>(m.xMalloc(b.size));
      ASSERT_NE(b.p, nullptr);
      std::memset(b.p, b.fill, static_cast<std::size_t>(b.size));
      live.push_back(b);
    } else if (op == 2) {
      Block& b = live[rng() % live.size()];
      check(b);
      const int n = m.xRoundup(size());
      b.p = static_cast<unsigned char*>(m.xRealloc(b.p, n));
      ASSERT_NE(b.p, nullptr);
      for (int i = 0; i < std::min(n, b.size); ++i) ASSERT_EQ(b.p[i], b.fill) << "kept byte " << i;
      b.size = n;
      std::memset(b.p, b.fill, static_cast<std::size_t>(b.size));
    } else {
      const std::size_t i = rng() % live.size();
      check(live[i]);
      m.xFree(live[i].p);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  for (const Block& b : live) {
    check(b);
    m.xFree(b.p);
  }
}

TEST(SqliteAllocator, LiveBlocksKeepTheirBytes) { walk(20261201, 20000); }

TEST(SqliteAllocator, ThreadsFreeWhatOthersTook) {
  const sqlite3_mem_methods& m = free_list_allocator();
  std::vector<void*> taken(2000);
  std::thread taker([&] {
    for (std::size_t i = 0; i < taken.size(); ++i) {
      taken[i] = m.xMalloc(static_cast<int>(8 + (i * 37) % 3000));
      std::memset(taken[i], 0x5a, 8);
    }
    walk(1, 2000);
  });
  taker.join();  // its own free lists are drained as it ends; these blocks live on
  std::thread freer([&] {
    for (void* p : taken) m.xFree(p);  // into this thread's lists
    walk(2, 5000);                    // which then serve its own takes
  });
  freer.join();
  walk(3, 2000);
}

}  // namespace
}  // namespace twice::env
