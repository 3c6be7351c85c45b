// twice's own programs allocate with operator new on the per-thread free
// lists (memory/operator_new.cpp): a block new hands out carries the lists'
// header (memory::requested() reads what was asked for), array and nothrow
// forms included, and a block may be deleted on another thread than the one
// that took it. If the replacement were not linked into this program, the
// first test would read malloc()'s own bookkeeping and fail.
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "memory/free_lists.h"

namespace twice::memory {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kReplaced = false;  // the sanitizers keep their own operator new
#else
constexpr bool kReplaced = true;
#endif

TEST(OperatorNew, BlocksComeFromTheFreeLists) {
  if (!kReplaced) GTEST_SKIP() << "under a sanitizer operator new is the sanitizer's";
  for (std::size_t n : {std::size_t{1}, std::size_t{24}, std::size_t{100}, std::size_t{4080}, std::size_t{5000},
                        std::size_t{70000}}) {
    void* p = ::operator new(n);
    EXPECT_EQ(requested(p), n) << n;
    std::memset(p, 0x5a, n);
    ::operator delete(p);
    char* a = new char[n];
    EXPECT_EQ(requested(a), n) << n;
    delete[] a;
    void* q = ::operator new(n, std::nothrow);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(requested(q), n) << n;
    ::operator delete(q, std::nothrow);
  }
  // A zero-byte request still gets a block of its own.
  void* z = ::operator new(0);
  void* z2 = ::operator new(0);
  EXPECT_NE(z, z2);
  ::operator delete(z);
  ::operator delete(z2);
}

TEST(OperatorNew, ContainersKeepTheirContentsAcrossThreads) {
  // Strings and vectors built on one thread, grown and freed on another.
  std::vector<std::unique_ptr<std::string>> made;
  std::thread maker([&] {
    for (int i = 0; i < 3000; ++i) made.push_back(std::make_unique<std::string>(static_cast<std::size_t>(i % 300), 'a' + i % 26));
  });
  maker.join();
  std::thread user([&] {
    for (std::size_t i = 0; i < made.size(); ++i) {
      ASSERT_EQ(made[i]->size(), i % 300);
      if (!made[i]->empty()) {
        ASSERT_EQ((*made[i])[0], static_cast<char>('a' + i % 26));
      }
      made[i]->append(50, 'z');
    }
    made.clear();  // every block into this thread's lists
    std::vector<std::string> again(2000, std::string(40, 'q'));
    for (const auto& s : again) ASSERT_EQ(s, std::string(40, 'q'));
  });
  user.join();
}

}  // namespace
}  // namespace twice::memory
