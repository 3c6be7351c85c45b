// IdSet: a set of task ids (1, 2, 3, ... in spawn order) as a bitset, for
// the scheduler's incremental view of which tasks can run.
//
// Why: before each step the scheduler listed the enabled tasks by visiting
// every live task, one cache line each; a burst keeps a hundred and more
// alive, most parked on the write lock, and that visit grew each step's cost
// with the tasks alive (a tenth of BM_Growth/burst/128, issue #12). The sets
// it keeps instead (ready, parked on each lock, parked without one) are read a
// word of 64 ids at a time, in id order, which is the order the strategy is
// handed the enabled tasks in.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace twice::sim {

class IdSet {
 public:
  void insert(int id) {
    const auto [w, bit] = place(id);
    if (w >= words_.size()) words_.resize(w + 1, 0);
    if (!(words_[w] & bit)) ++size_;
    words_[w] |= bit;
    low_ = std::min(low_, w);
  }
  void erase(int id) {
    const auto [w, bit] = place(id);
    if (w >= words_.size() || !(words_[w] & bit)) return;
    words_[w] &= ~bit;
    --size_;
  }
  bool contains(int id) const {
    const auto [w, bit] = place(id);
    return w < words_.size() && (words_[w] & bit);
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The ids of word `w` (ids 64w+1 ... 64w+64) as bits; 0 past the end.
  std::uint64_t word(std::size_t w) const { return w < words_.size() ? words_[w] : 0; }
  std::size_t words() const { return words_.size(); }
  // The first word that holds an id (those below it are empty); kNoWord
  // when the set is empty. Ids are handed out in increasing order and most
  // tasks end, so a long run's sets are empty below the tasks alive: a visit
  // starts here rather than at 0.
  static constexpr std::size_t kNoWord = std::numeric_limits<std::size_t>::max();
  std::size_t low() {
    while (low_ < words_.size() && words_[low_] == 0) ++low_;
    return low_ < words_.size() ? low_ : kNoWord;
  }
  // The smallest id in the set; 0 when empty.
  int first() {
    const std::size_t w = low();
    return w < words_.size() ? id_of(w, words_[w]) : 0;
  }
  // Calls f(id) for each id of `bits`, a word `w` of some IdSet, in order.
  template <typename F>
  static void each(std::size_t w, std::uint64_t bits, F&& f) {
    while (bits) {
      f(id_of(w, bits));
      bits &= bits - 1;
    }
  }

 private:
  struct Place {
    std::size_t word;
    std::uint64_t bit;
  };
  static Place place(int id) {
    const auto i = static_cast<std::size_t>(id - 1);
    return {i / 64, std::uint64_t{1} << (i % 64)};
  }
  static int id_of(std::size_t w, std::uint64_t bits) {
    return static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))) + 1;
  }
  std::vector<std::uint64_t> words_;
  std::size_t size_ = 0;
  std::size_t low_ = 0;  // words_[0 .. low_) are 0
};

}  // namespace twice::sim
