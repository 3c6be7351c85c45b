// Shrinking a failing run's choice sequence to a smaller one that still fails
// the same way. Because every decision of a run (schedule, latencies, faults)
// is one entry of the sequence, shrinking it shrinks all of them together.
// Deterministic: the same input gives the same output.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace twice::explore {

using ChoiceSequence = std::vector<std::uint64_t>;
// Runs a candidate; returns the sequence the run actually consumed when it
// still fails, nullopt when it passes.
using FailsWith = std::function<std::optional<ChoiceSequence>(const ChoiceSequence&)>;

struct ShrinkStats {
  int runs = 0;
  int improvements = 0;
};

// Greedy passes (delete chunks, zero chunks, lower single values) until none
// helps or `budget` runs are spent. Candidates are accepted only when shorter,
// or as long and lexicographically smaller, so the result is never larger.
ChoiceSequence shrink(ChoiceSequence failing, const FailsWith& fails, int budget, ShrinkStats* stats = nullptr);

}  // namespace twice::explore
