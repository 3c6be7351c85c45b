// Clock: the virtual clock as a handler sees it. Reading it is a scheduling
// point (real code reads the time between statements, and that is where it can
// be preempted). sleep() parks the task while the clock moves on for others.
#pragma once

#include "twice/time.h"

namespace twice {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Micros now() = 0;
  virtual void sleep(Micros duration) = 0;
};

}  // namespace twice
