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
// Whatever may change its answer calls note_lock_change() on that thread.
#pragma once

#include <cstdint>

namespace twice::sim {

// How many times a lock was taken or released on this thread. The database
// layer counts every change (note_lock_change()), and the scheduler asks a
// parked task's grantable() again only when the count moved since it last
// asked: in a burst, a hundred tasks parked on the write lock were each asked
// before every step, though most steps change no lock (issue #12).
inline thread_local std::uint64_t lock_changes = 0;
inline void note_lock_change() { ++lock_changes; }

// What decides a wait's answer, where the wait can say: two LockWaits with
// equal keys answer grantable() alike at every moment, so the scheduler asks
// one of them for all (a burst parks a hundred tasks on the same write lock,
// and asking each was a cache miss per task per lock change, about a fifth
// of BM_Growth/burst/128). A null `what` promises nothing: that wait is asked
// on its own.
struct LockWaitKey {
  const void* what = nullptr;  // e.g. the file whose locks decide
  int holding = 0;             // e.g. the lock the waiter holds itself
  int wants = 0;               // e.g. the lock it was refused
  bool operator==(const LockWaitKey&) const = default;
};

class LockWait {
 public:
  // True when the waiting statement, retried now, would get its lock. The
  // answer may change only where note_lock_change() is called.
  virtual bool grantable() const = 0;
  // See LockWaitKey. Read once, when the task parks: it must not change
  // while the task waits.
  virtual LockWaitKey key() const { return {}; }

 protected:
  ~LockWait() = default;
};

}  // namespace twice::sim
