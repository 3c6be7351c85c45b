#include "sim/knuth_estimate.h"

namespace twice::sim {

std::uint64_t KnuthProbe::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t KnuthProbe::choose(std::uint64_t n, ChoiceKind kind, const std::vector<int>*, bool last_enabled) {
  if (n <= 1) return 0;  // a forced step: no node
  // The values the bounds allow, as ExhaustiveSearch::allowed() counts them (without sleep sets).
  std::vector<std::uint64_t> allowed;
  for (std::uint64_t v = 0; v < n; ++v) {
    bool ok = true;
    if (kind == ChoiceKind::kSchedule) {
      const int preemptions = preemptions_ + (last_enabled && v > 0 ? 1 : 0);
      ok = bounds_.preemption_bound < 0 || preemptions <= bounds_.preemption_bound;
    } else if (kind == ChoiceKind::kFault) {
      ok = v == 0 || faults_ + static_cast<int>(v) <= bounds_.max_faults;
    }
    if (ok) allowed.push_back(v);
  }
  if (allowed.empty()) return 0;  // cannot happen: value 0 is always allowed
  leaves_ *= static_cast<double>(allowed.size());
  const std::uint64_t v = allowed[next() % allowed.size()];
  if (kind == ChoiceKind::kSchedule && last_enabled && v > 0) ++preemptions_;
  if (kind == ChoiceKind::kFault) faults_ += static_cast<int>(v);
  return v;
}

}  // namespace twice::sim
