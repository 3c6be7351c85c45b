// Choices: the one source of nondeterminism in a run.
//
// Every decision the simulator makes (which task runs next, how long a
// statement takes, whether the network duplicates a request or loses a reply)
// is drawn here, as a bounded integer. Drawing from a seed records the
// sequence; replaying a recorded (or shrunk) sequence reproduces the run. Zero
// is always the simplest answer: keep running the same task, the shortest
// latency, no fault. So shrinking a sequence towards shorter and smaller
// values shrinks faults and schedule together (see docs/architecture.md).
// Not thread-safe; owned by one run.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "twice/time.h"

namespace twice::sim {

// SplitMix64: small, fast and good enough to drive a simulation.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t state_;
};

// The seed of the index-th run of a cell: distinct, well-mixed, printable.
std::uint64_t derive_seed(std::uint64_t base, std::uint64_t index);

class Choices {
 public:
  explicit Choices(std::uint64_t seed) : rng_(seed) {}
  // Replays `sequence`; past its end every draw is 0.
  explicit Choices(std::vector<std::uint64_t> sequence)
      : rng_(0), replay_(std::move(sequence)) {}

  // Uniform in [0, n) when drawing; the recorded value (capped at n-1) when replaying.
  std::uint64_t draw(std::uint64_t n);
  // True with probability p; a draw of 0 means false.
  bool chance(double p);
  // A duration in [lo, hi]; a draw of 0 means lo.
  Micros between(Micros lo, Micros hi);

  // What was drawn so far: replaying it reproduces the run.
  const std::vector<std::uint64_t>& consumed() const { return consumed_; }

 private:
  Rng rng_;
  std::optional<std::vector<std::uint64_t>> replay_;
  std::size_t pos_ = 0;
  std::vector<std::uint64_t> consumed_;
};

}  // namespace twice::sim
