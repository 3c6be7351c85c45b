// How twice's commands tell a first stop signal (Ctrl-C, SIGTERM: finish what
// is under way and write the results) from a second one (stop now) and a
// third (stop at once, writing nothing). `timeout`, and CI runners that cancel
// a job, send one signal twice at once: to twice, then to its whole process
// group. A repeat within kOneSignal of the stop last taken is that same stop,
// not a person's next Ctrl-C; taken as the next, it threw away every result
// (a `timeout 30m twice run` printed no report at all).
// Async-signal-safe: for signal handlers.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace twice::cli {

enum class StopSignal { kFirst, kRepeat, kSecond, kLater };

inline constexpr std::int64_t kOneSignalNs = 100'000'000;

// The stops one handler has taken: when the last came (0 before the first),
// and how many.
struct StopCount {
  std::atomic<std::int64_t> last_ns{0};
  std::atomic<int> taken{0};
};

// Marks `stopping`; says which kind of stop this signal is.
inline StopSignal classify_stop(std::atomic<bool>& stopping, StopCount& count) {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  const std::int64_t now = static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  std::int64_t last = count.last_ns.load();
  do {
    if (last != 0 && now - last < kOneSignalNs) return StopSignal::kRepeat;
  } while (!count.last_ns.compare_exchange_weak(last, now));
  stopping = true;
  const int taken = ++count.taken;
  return taken == 1 ? StopSignal::kFirst : taken == 2 ? StopSignal::kSecond : StopSignal::kLater;
}

}  // namespace twice::cli
