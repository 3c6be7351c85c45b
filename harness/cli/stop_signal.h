// How twice's commands tell a first stop signal (Ctrl-C, SIGTERM: finish what
// is under way and write the results) from a second one (stop at once).
// `timeout`, and CI runners that cancel a job, send one signal twice at once:
// to twice, then to its whole process group. A repeat within kOneSignal is
// that same stop, not a person's second Ctrl-C; taken as the second, it threw
// away every result (a `timeout 30m twice run` printed no report at all).
// Async-signal-safe: for signal handlers.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace twice::cli {

enum class StopSignal { kFirst, kRepeat, kSecond };

inline constexpr std::int64_t kOneSignalNs = 100'000'000;

// Marks `stopping`; says which kind of stop this signal is. `first_ns` holds
// when the first came (0 before it), one per handler, as `stopping` is.
inline StopSignal classify_stop(std::atomic<bool>& stopping, std::atomic<std::int64_t>& first_ns) {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  const std::int64_t now = static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  std::int64_t first = 0;  // stays 0 for the first signal
  first_ns.compare_exchange_strong(first, now);
  if (!stopping.exchange(true)) return StopSignal::kFirst;
  return first != 0 && now - first < kOneSignalNs ? StopSignal::kRepeat : StopSignal::kSecond;
}

}  // namespace twice::cli
