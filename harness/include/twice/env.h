// Env: everything a handler may touch. Handlers call nothing else for I/O,
// time, randomness or locks (no std::chrono, sleep, rand or sqlite3_*): that
// is what makes a run a function of its seed. An Env belongs to one task and
// lives as long as that task's call to Handler::handle.
#pragma once

#include <string>
#include <string_view>

#include "twice/clock.h"
#include "twice/db.h"
#include "twice/locks.h"

namespace twice {

class Env {
 public:
  virtual ~Env() = default;
  virtual Db& db() = 0;
  virtual Locks& locks() = 0;
  virtual Clock& clock() = 0;
  // A token unique within the run and stable across replays ("T3"), e.g. a lock owner.
  virtual std::string token() = 0;
  // Writes a line into the run's trace, beside this task's statements.
  virtual void note(std::string_view text) = 0;
};

}  // namespace twice
