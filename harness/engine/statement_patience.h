// StatementPatience: how long the statement loop (server_run.h) waits for a
// statement's answer before it asks the server whether the statement is
// blocked, and poll_us(), poll(2) with a timeout in microseconds.
//
// Every blocked statement costs that first wait in wall time, and a run of a
// concurrency scenario blocks a few times: a fixed millisecond was a fifth of
// a PostgreSQL run on an idle machine, where an unblocked statement answers in
// about a hundred microseconds. Asking sooner on a loaded machine, where
// statements take longer, only adds questions (each a round trip). So the
// first wait is learned: twice the recent time of statements that answered
// without ever being blocked, kept between kMinUs and kMaxUs (the old fixed
// millisecond). Which statements are blocked is still the server's answer, so
// the patience changes how soon a run finishes, never what it sees.
//
// Threads: one estimate per thread (a worker's runs, one after another), so
// no locking; runs on different threads learn apart.
#pragma once

#include <poll.h>
#include <time.h>

#include <algorithm>

namespace twice::engine {

class StatementPatience {
 public:
  static constexpr int kMinUs = 100;
  static constexpr int kMaxUs = 1000;

  // The first wait, in microseconds.
  static int first_us() { return std::clamp(static_cast<int>(2 * typical_us()), kMinUs, kMaxUs); }
  // A statement that was never blocked answered `us` after it was sent.
  static void answered_unblocked(double us) { typical_us() += (us - typical_us()) / 8; }

 private:
  // Starts at half the old fixed millisecond: the first statements of a
  // thread wait as long as before.
  static double& typical_us() {
    thread_local double estimate = kMaxUs / 2.0;
    return estimate;
  }
};

// poll(2) for up to `timeout_us` microseconds (0: does not wait).
inline int poll_us(pollfd* fds, nfds_t n, int timeout_us) {
  timespec t{timeout_us / 1000000, static_cast<long>(timeout_us % 1000000) * 1000};
  return ::ppoll(fds, n, &t, nullptr);
}

}  // namespace twice::engine
