#include "sim/choices.h"

#include <algorithm>
#include <cmath>

#include "sim/choice_guide.h"

namespace twice::sim {

std::uint64_t Rng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t Rng::below(std::uint64_t n) {
  // Rejection sampling keeps the draw unbiased for any n.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t v;
  do {
    v = next();
  } while (v >= limit);
  return v % n;
}

std::uint64_t derive_seed(std::uint64_t base, std::uint64_t index) {
  Rng rng(base ^ (index * 0xd1b54a32d192ed03ULL));
  rng.next();
  // Keep seeds below 2^53 so that JSON readers (JavaScript) hold them exactly.
  return rng.next() & ((1ULL << 53) - 1);
}

std::uint64_t Choices::draw(std::uint64_t n) {
  if (n <= 1) return 0;  // no choice to make: nothing is recorded
  std::uint64_t v;
  if (guide_) {
    v = std::min(guide_->choose(n, ChoiceKind::kOther, nullptr, false), n - 1);
  } else if (replay_) {
    v = pos_ < replay_->size() ? std::min((*replay_)[pos_], n - 1) : 0;
    ++pos_;
  } else {
    v = rng_.below(n);
  }
  consumed_.push_back(v);
  return v;
}

bool Choices::chance(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  // A fault that may fire is one binary choice of the search: 0, it does not.
  if (exhaustive_) return binary(ChoiceKind::kFault);
  constexpr std::uint64_t kScale = 1'000'000;
  const auto threshold = static_cast<std::uint64_t>(std::llround((1.0 - p) * kScale));
  return draw(kScale) >= threshold;
}

Micros Choices::between(Micros lo, Micros hi) {
  if (hi <= lo) return lo;
  // The search branches on orders and faults, not on each latency: every
  // duration of the run takes the same end of its range (tempo()).
  if (exhaustive_) return tempo() ? hi : lo;
  return lo + static_cast<Micros>(draw(static_cast<std::uint64_t>(hi - lo) + 1));
}

bool Choices::tempo() {
  if (!slow_tempo_) slow_tempo_ = binary(ChoiceKind::kOther);
  return *slow_tempo_;
}

Micros Choices::fault_duration(Micros lo, Micros hi) {
  if (!exhaustive_) return between(lo, hi);
  if (hi <= lo) return lo;
  return binary(ChoiceKind::kOther) ? hi : lo;
}

bool Choices::binary(ChoiceKind kind) {
  std::uint64_t v;
  if (guide_) {
    v = std::min<std::uint64_t>(guide_->choose(2, kind, nullptr, false), 1);
  } else {
    v = pos_ < replay_->size() ? std::min<std::uint64_t>((*replay_)[pos_], 1) : 0;
    ++pos_;
  }
  consumed_.push_back(v);
  return v == 1;
}

std::uint64_t Choices::schedule(const std::vector<int>& order, bool last_enabled) {
  if (!guide_) return draw(order.size());
  const std::uint64_t n = order.size();
  const std::uint64_t v = std::min<std::uint64_t>(guide_->choose(n, ChoiceKind::kSchedule, &order, last_enabled),
                                                  n == 0 ? 0 : n - 1);
  if (n > 1) consumed_.push_back(v);  // as draw(): a forced step is no choice
  return v;
}

}  // namespace twice::sim
