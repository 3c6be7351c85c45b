// StopNow: a stop that does not wait (a second Ctrl-C), and the pieces of
// work (a `twice run` cell, a black-box run) started and finished before it,
// in one atomic word. A signal handler stops and says what it keeps and
// drops ("the 3 finished cells are written; 2 cells under way are dropped");
// the work itself starts and finishes through here, so that what it said is
// exactly what happens: once stopped, nothing starts, and a piece under way
// whose result comes in later (its last run ended after the stop, its result
// was on its way from its process) is dropped, not written. Counted apart,
// the handler's numbers and the writer's could disagree: it said "2 cells
// under way are dropped" of cells an --in-process run then wrote, and exited 0.
//
// Lock-free; every member is async-signal-safe and safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace twice::process {

class StopNow {
 public:
  struct Counts {
    int started = 0;
    int finished = 0;
    int under_way() const { return started - finished; }
  };

  // A piece of work may start: counts it and returns true, unless stopped.
  bool start() { return add(kStartedOne); }
  // A piece's result is in: counts it as finished (to be written) and returns
  // true, unless stopped first (it is then dropped).
  bool finish() { return add(kFinishedOne); }
  // Stops; returns the counts at that moment (also at a later call: they no
  // longer change).
  Counts stop() { return counts(word_.fetch_or(kStopped)); }
  bool stopped() const { return (word_.load() & kStopped) != 0; }
  Counts now() const { return counts(word_.load()); }

 private:
  // Bit 0: stopped; bits 1 to 31: finished; bits 32 to 63: started.
  static constexpr std::uint64_t kStopped = 1;
  static constexpr std::uint64_t kFinishedOne = 2;
  static constexpr std::uint64_t kStartedOne = std::uint64_t{1} << 32;

  bool add(std::uint64_t one) {
    std::uint64_t word = word_.load();
    do {
      if (word & kStopped) return false;
    } while (!word_.compare_exchange_weak(word, word + one));
    return true;
  }
  static Counts counts(std::uint64_t word) {
    return {static_cast<int>(word >> 32), static_cast<int>((word & 0xffffffffu) >> 1)};
  }

  std::atomic<std::uint64_t> word_{0};
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "a signal handler uses it");
};

}  // namespace twice::process
