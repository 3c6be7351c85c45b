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

enum class ChoiceKind : std::uint8_t;  // sim/choice_guide.h
class ChoiceGuide;  // sim/choice_guide.h: who decides the draws of an exhaustive search

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
  explicit Choices(std::uint64_t seed) : rng_(seed) { consumed_.reserve(kDrawsReserved); }
  // Replays `sequence`; past its end every draw is 0.
  explicit Choices(std::vector<std::uint64_t> sequence) : rng_(0), replay_(std::move(sequence)) {
    consumed_.reserve(kDrawsReserved);
  }
  // The exhaustive strategy's choices (sim/choice_guide.h): only the choices
  // the search branches on are drawn. A duration takes its range's lower
  // end in a fast run and its upper end in a slow one (tempo(): one draw of
  // 2, at the first duration with a range), except a fault's
  // (fault_duration(): either end, drawn each time); a fault that may fire is
  // a draw of 2 (1: it fires). Replays `sequence` that way; with a guide, the guide decides every draw instead.
  struct Exhaustive {};
  Choices(Exhaustive, std::vector<std::uint64_t> sequence) : Choices(std::move(sequence)) { exhaustive_ = true; }
  Choices(Exhaustive, ChoiceGuide& guide) : Choices(std::vector<std::uint64_t>{}) {
    exhaustive_ = true;
    guide_ = &guide;
  }

  // Uniform in [0, n) when drawing; the recorded value (capped at n-1) when replaying.
  std::uint64_t draw(std::uint64_t n);
  // True with probability p; a draw of 0 means false.
  bool chance(double p);
  // A duration in [lo, hi]; a draw of 0 means lo.
  Micros between(Micros lo, Micros hi);
  // A duration a fault that fired lasts (a slow service, a pause, a copy's
  // delay, a downtime): between(lo, hi), except that the exhaustive strategy
  // branches on both ends of the range (a draw of 2: 0 lo, 1 hi), since where
  // the fault ends against the run's timers (a refund, a retry) can decide
  // the run. It adds no fault to --max-faults: the fault was counted firing.
  Micros fault_duration(Micros lo, Micros hi);

  // Which of the enabled tasks `order` runs next (the exhaustive strategy's
  // draw): its index in `order`. `last_enabled`: order[0] is the task that ran
  // last, so any other index preempts it. Told to the guide even when there is
  // no choice (a forced step still moves the search's sleep sets on).
  std::uint64_t schedule(const std::vector<int>& order, bool last_enabled);
  bool exhaustive() const { return exhaustive_; }
  ChoiceGuide* guide() const { return guide_; }

  // What was drawn so far: replaying it reproduces the run.
  const std::vector<std::uint64_t>& consumed() const { return consumed_; }

 private:
  // The exhaustive strategy's draw of 2 (from the guide, or the replayed
  // sequence): true for 1.
  bool binary(ChoiceKind kind);
  // The exhaustive strategy's tempo: false, every step latency, network
  // delay and attack time at its range's lower end; true, at its upper end.
  // Drawn once, when the run first needs it. Two extremes, not the space
  // between: slow steps are what make ten orders 100 ms apart overlap (and
  // queue on a lock past the gateway's timeout), fast ones what keep a
  // retry behind the first delivery.
  bool tempo();

  // A short run draws about a hundred times: room for that up front, rather
  // than seven reallocations of consumed_ as it doubles from one.
  static constexpr std::size_t kDrawsReserved = 128;

  Rng rng_;
  std::optional<std::vector<std::uint64_t>> replay_;
  std::size_t pos_ = 0;
  std::vector<std::uint64_t> consumed_;
  bool exhaustive_ = false;
  ChoiceGuide* guide_ = nullptr;
  std::optional<bool> slow_tempo_;
};

}  // namespace twice::sim
