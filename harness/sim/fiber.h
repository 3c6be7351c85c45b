// Fiber: a function that runs on a stack of its own, on the thread that
// resumes it, until it suspends itself or returns. The Scheduler runs each
// task as one, so handing the baton to a task is a user-space stack switch
// instead of waking another thread (see docs/architecture.md).
//
// Threads: a fiber lives on one thread. resume() is called from that thread's
// own stack (the scheduler); suspend() only from inside the fiber. Each side
// keeps its own C++ exception state (std::uncaught_exceptions(), the exception
// being handled), as it would on a thread of its own.
#pragma once

#include <ucontext.h>

#include <cstddef>
#include <functional>

namespace twice::sim {

class Fiber {
 public:
  // Does not start `body`: the first resume() does. `body` must not throw;
  // an exception escaping it terminates the process, as on a thread.
  explicit Fiber(std::function<void()> body);
  // Destroy only a fiber that never started or whose body returned.
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Runs the fiber until it calls suspend() or its body returns.
  void resume();
  // From inside the fiber: returns to the resume() that ran it.
  void suspend();
  bool finished() const { return finished_; }
  // How many stacks this thread has mapped so far. A finished fiber's stack
  // is kept for the next one, so a run maps about as many as it had fibers
  // alive at once (tests check that).
  static std::size_t stacks_mapped();

 private:
  // libstdc++'s per-thread exception bookkeeping (__cxa_eh_globals): what
  // is being caught, and how many exceptions are in flight.
  struct ExceptionState {
    void* caught = nullptr;
    unsigned int uncaught = 0;
  };

  static void entry(unsigned int low, unsigned int high) noexcept;  // makecontext's, for start()
  static void start(Fiber* self) noexcept;
  void swap_exception_state();

  std::function<void()> body_;
  void* stack_ = nullptr;
  std::size_t stack_size_ = 0;
  // Not value-initialized: zeroing two ucontext_t (nearly 2 KB) was most of
  // the cost of making a fiber, and a fiber is made per task. With
  // swapcontext() getcontext() fills fiber_ and the first switch fills
  // caller_ before either is read; fiber.cpp's own switch never reads them.
  ucontext_t fiber_;
  ucontext_t caller_;
  void* fiber_sp_ = nullptr;   // with fiber.cpp's own switch (x86-64): the saved stack pointers
  void* caller_sp_ = nullptr;
  ExceptionState other_side_;  // the side not running now
  bool finished_ = false;
  // The resumer's stack, for AddressSanitizer (unused without it).
  const void* caller_stack_ = nullptr;
  std::size_t caller_stack_size_ = 0;
  // ThreadSanitizer's contexts for this fiber and its resumer (null without it).
  void* tsan_fiber_ = nullptr;
  void* caller_tsan_ = nullptr;
};

}  // namespace twice::sim
