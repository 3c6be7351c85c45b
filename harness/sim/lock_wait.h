// LockWait: what a task parked on SQLITE_BUSY waits for, as the scheduler
// asks it: could the lock it was refused be granted now?
//
// Why: a parked task that is merely woken when some lock is released retries
// as a step of its own, and most such retries meet the lock again (a burst of
// N deliveries queueing for the write lock made N^2 futile steps: each a
// strategy draw, a clock draw, a fault site and a trace line). With a LockWait
// the scheduler counts the task among those that can run only while its lock
// could be granted, so the step that resumes it is the retry that succeeds.
// Who gets a freed lock when several wait stays the strategy's choice: each
// of them is enabled until one takes it.
//
// Implemented by the database layer (env/lock_ledger.h for SQLite). Threads:
// asked on the scheduler's thread, between steps; it must not change anything.
#pragma once

namespace twice::sim {

class LockWait {
 public:
  // True when the waiting statement, retried now, would get its lock.
  virtual bool grantable() const = 0;

 protected:
  ~LockWait() = default;
};

}  // namespace twice::sim
