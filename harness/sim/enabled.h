// Enabled: the tasks that can run at a scheduling point, as the scheduler
// hands them to its strategy: a bitset by task id (ids 1, 2, 3, ...), read
// in id order.
//
// Why not a list of ids: a burst keeps a hundred tasks and more enabled at
// every step (parked on a lock that is free), and writing each id into a
// vector, then walking it twice to draw one, made a step's cost grow with
// the tasks alive: a sixth of BM_Growth/burst/128's instructions, and the
// largest part of what it costs above four times burst/32 (issue #12). The
// default strategy draws an index and finds that id by counting bits, 64 ids
// a word; the others, which walk every enabled task anyway, use each().
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace twice::sim {

class Enabled {
 public:
  Enabled() = default;
  // The ids given, in any order (tests feed strategies by hand).
  Enabled(std::initializer_list<int> ids) { assign(ids.begin(), ids.end()); }
  explicit Enabled(const std::vector<int>& ids) { assign(ids.begin(), ids.end()); }

  // Starts a new step's set, whose first word is `low_word` (ids
  // 64 low_word + 1 ...): the scheduler then appends the words in order.
  void restart(std::size_t low_word) {
    low_ = low_word;
    words_.clear();
    size_ = 0;
  }
  void append_word(std::uint64_t bits) {
    words_.push_back(bits);
    size_ += static_cast<std::size_t>(std::popcount(bits));
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(int id) const {
    const auto i = static_cast<std::size_t>(id - 1);
    if (id < 1 || i / 64 < low_ || i / 64 - low_ >= words_.size()) return false;
    return (words_[i / 64 - low_] >> (i % 64)) & 1;
  }
  // How many enabled ids are below `id`.
  std::size_t rank(int id) const {
    if (id < 1) return 0;
    const auto i = static_cast<std::size_t>(id - 1);
    if (i / 64 < low_) return 0;
    std::size_t n = 0;
    const std::size_t end = std::min(i / 64 - low_, words_.size());
    for (std::size_t w = 0; w < end; ++w) n += static_cast<std::size_t>(std::popcount(words_[w]));
    if (end < words_.size() && end == i / 64 - low_)
      n += static_cast<std::size_t>(std::popcount(words_[end] & ((std::uint64_t{1} << (i % 64)) - 1)));
    return n;
  }
  // The enabled id of rank `n` (0: the smallest); n < size().
  int nth(std::size_t n) const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      std::uint64_t bits = words_[w];
      const auto count = static_cast<std::size_t>(std::popcount(bits));
      if (n >= count) {
        n -= count;
        continue;
      }
      for (; n > 0; --n) bits &= bits - 1;
      return id_of(w, bits);
    }
    return 0;  // not reached when n < size()
  }
  int front() const { return nth(0); }
  // Calls f(id) for every enabled id, in increasing order.
  template <typename F>
  void each(F&& f) const {
    for (std::size_t w = 0; w < words_.size(); ++w)
      for (std::uint64_t bits = words_[w]; bits; bits &= bits - 1) f(id_of(w, bits));
  }
  std::vector<int> ids() const {
    std::vector<int> out;
    out.reserve(size_);
    each([&](int id) { out.push_back(id); });
    return out;
  }

 private:
  int id_of(std::size_t w, std::uint64_t bits) const {
    return static_cast<int>((low_ + w) * 64 + static_cast<std::size_t>(std::countr_zero(bits))) + 1;
  }
  template <typename It>
  void assign(It begin, It end) {
    if (begin == end) return;
    const auto word = [](int id) { return static_cast<std::size_t>(id - 1) / 64; };
    low_ = word(*std::min_element(begin, end));
    words_.assign(word(*std::max_element(begin, end)) - low_ + 1, 0);
    for (It it = begin; it != end; ++it) words_[word(*it) - low_] |= std::uint64_t{1} << ((*it - 1) % 64);
    for (std::uint64_t bits : words_) size_ += static_cast<std::size_t>(std::popcount(bits));
  }
  std::vector<std::uint64_t> words_;  // words_[k]: ids 64 (low_ + k) + 1 ... + 64
  std::size_t low_ = 0;
  std::size_t size_ = 0;
};

}  // namespace twice::sim
