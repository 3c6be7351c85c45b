// ProcessFaults: what the scheduler asks, at each scheduling point of a
// started task, of whoever models the process the tasks live in (the
// Endpoint). The scheduler carries the faults out (a pause puts the task to
// sleep; a crash takes every task down); the implementation draws them and
// says what follows (the process is down until it restarts).
// Called on the scheduler's side, between steps.
#pragma once

#include <optional>
#include <string>

#include "twice/time.h"

namespace twice::sim {

class ProcessFaults {
 public:
  virtual ~ProcessFaults() = default;
  // How long task `task` stalls before `pending`, its next operation (it may
  // be 0); nullopt: it does not. Asked at most once per scheduling point.
  virtual std::optional<Micros> pause_before(int task, const std::string& pending) = 0;
  // True when the process dies before task `task` runs `pending`.
  virtual bool crash_before(int task, const std::string& pending) = 0;
  // After a crash took every task down.
  virtual void crashed() = 0;
};

}  // namespace twice::sim
