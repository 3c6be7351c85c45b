// Heartbeat: a counter the scheduler bumps at every scheduling point, so that
// the parent process watching a cell's child (explore/cell_process.h) can tell
// a cell that is slow from one stuck in a handler that never reaches an Env
// call (a tight loop, a deadlock on a mutex of its own).
//
// The counter lives in memory shared between the two processes (an anonymous
// MAP_SHARED page mapped before fork); `heartbeat` points at it in the child
// and is null everywhere else, so a run outside a cell's child pays one load
// and one branch per step. Set once in the child before any run; read by the
// parent with relaxed loads (only "did it change" matters).
#pragma once

#include <atomic>
#include <cstdint>

namespace twice::sim {

inline std::atomic<std::uint64_t>* heartbeat = nullptr;

inline void beat() {
  if (heartbeat) heartbeat->fetch_add(1, std::memory_order_relaxed);
}

}  // namespace twice::sim
