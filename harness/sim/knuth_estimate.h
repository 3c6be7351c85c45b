// KnuthProbe: Knuth's random-probe estimate of the size of an exhaustive
// search's choice tree (Knuth, "Estimating the efficiency of backtrack
// programs", 1975), for "explored N of about M" when the budget stops the
// search first.
//
// A probe is one run whose every draw takes a value uniformly at random among
// those the bounds allow (sim/exhaustive_search.h: the preemption bound, the
// fault budget); the product of the number of allowed values at each node is
// an unbiased estimate of the number of leaves, i.e. schedules. The mean over
// many probes is the estimate. The tree estimated is the bounded tree without
// reduction (which values sleep sets prune depends on the siblings explored
// before, which a probe does not run), so for a reduced search M is an upper
// estimate. Deterministic: the probes draw from a fixed seed.
//
// Use: for each probe, KnuthProbe p(bounds, derive_seed(seed, i)); run with it
// as the run's guide; add p.leaves(). One thread.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/choice_guide.h"
#include "sim/exhaustive_search.h"

namespace twice::sim {

class KnuthProbe final : public ChoiceGuide {
 public:
  KnuthProbe(const SearchBounds& bounds, std::uint64_t seed) : bounds_(bounds), state_(seed) {}

  // The probe's estimate of the tree's leaves: the product of the allowed
  // values at every node it passed.
  double leaves() const { return leaves_; }

  // ChoiceGuide
  std::uint64_t choose(std::uint64_t n, ChoiceKind kind, const std::vector<int>* order, bool last_enabled) override;
  void stepped(const Footprint&) override {}
  void outside_step() override {}

 private:
  std::uint64_t next();  // splitmix64

  SearchBounds bounds_;
  std::uint64_t state_;
  double leaves_ = 1.0;
  int preemptions_ = 0;
  int faults_ = 0;
};

// The mean of `probes` probes' estimates, each run by `run_probe` (which runs
// the program once with the probe as its guide). 0 when `probes` is 0.
template <typename RunProbe>
double knuth_estimate(const SearchBounds& bounds, std::uint64_t seed, int probes, RunProbe&& run_probe);

}  // namespace twice::sim

#include "sim/choices.h"

namespace twice::sim {

template <typename RunProbe>
double knuth_estimate(const SearchBounds& bounds, std::uint64_t seed, int probes, RunProbe&& run_probe) {
  double sum = 0.0;
  for (int i = 0; i < probes; ++i) {
    KnuthProbe probe(bounds, derive_seed(seed, static_cast<std::uint64_t>(i)));
    run_probe(probe);
    sum += probe.leaves();
  }
  return probes > 0 ? sum / probes : 0.0;
}

}  // namespace twice::sim
