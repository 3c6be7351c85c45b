#include "explore/shrink.h"

#include <algorithm>

namespace twice::explore {
namespace {

bool simpler(const ChoiceSequence& a, const ChoiceSequence& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

class Shrinker {
 public:
  Shrinker(ChoiceSequence start, const FailsWith& fails, int budget)
      : best_(std::move(start)), fails_(fails), budget_(budget) {}

  bool exhausted() const { return stats_.runs >= budget_; }

  // Tries `candidate`; keeps what it consumed when it fails and is simpler.
  bool attempt(const ChoiceSequence& candidate) {
    if (exhausted() || !simpler(candidate, best_)) return false;
    ++stats_.runs;
    auto consumed = fails_(candidate);
    if (!consumed) return false;
    // Trailing zeros are what replay draws past the end anyway.
    while (!consumed->empty() && consumed->back() == 0) consumed->pop_back();
    if (!simpler(*consumed, best_)) return false;
    best_ = std::move(*consumed);
    ++stats_.improvements;
    return true;
  }

  bool delete_chunks() {
    bool any = false;
    for (std::size_t k : {16u, 8u, 4u, 2u, 1u}) {
      for (std::size_t i = 0; i + k <= best_.size() && !exhausted();) {
        ChoiceSequence c = best_;
        c.erase(c.begin() + static_cast<long>(i), c.begin() + static_cast<long>(i + k));
        if (attempt(c)) any = true;
        else ++i;
      }
    }
    return any;
  }

  bool zero_chunks() {
    bool any = false;
    for (std::size_t k : {8u, 4u, 2u}) {
      for (std::size_t i = 0; i + k <= best_.size() && !exhausted(); ++i) {
        ChoiceSequence c = best_;
        bool nonzero = false;
        for (std::size_t j = i; j < i + k; ++j) {
          nonzero |= c[j] != 0;
          c[j] = 0;
        }
        if (nonzero && attempt(c)) any = true;
      }
    }
    return any;
  }

  bool lower_values() {
    bool any = false;
    for (std::size_t i = 0; i < best_.size() && !exhausted(); ++i) {
      if (best_[i] == 0) continue;
      ChoiceSequence c = best_;
      c[i] = 0;
      if (attempt(c)) {
        any = true;
        continue;
      }
      // Binary search for the smallest value that still fails.
      std::uint64_t lo = 0, hi = best_[i];
      while (lo + 1 < hi && !exhausted() && i < best_.size()) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        c = best_;
        c[i] = mid;
        if (attempt(c)) {
          any = true;
          hi = mid;
        } else {
          lo = mid;
        }
        if (i >= best_.size() || best_[i] != hi) break;  // the sequence changed shape
      }
    }
    return any;
  }

  ChoiceSequence run() {
    // Trailing zeros first: they cost nothing to drop.
    while (!best_.empty() && best_.back() == 0) best_.pop_back();
    for (bool progress = true; progress && !exhausted();) {
      progress = delete_chunks();
      progress |= zero_chunks();
      progress |= lower_values();
    }
    return best_;
  }

  ShrinkStats stats() const { return stats_; }

 private:
  ChoiceSequence best_;
  const FailsWith& fails_;
  int budget_;
  ShrinkStats stats_;
};

}  // namespace

ChoiceSequence shrink(ChoiceSequence failing, const FailsWith& fails, int budget, ShrinkStats* stats) {
  Shrinker s(std::move(failing), fails, budget);
  ChoiceSequence out = s.run();
  if (stats) *stats = s.stats();
  return out;
}

}  // namespace twice::explore
