#include "sim/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cxxabi.h>
#include <exception>
#include <new>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TWICE_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TWICE_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TWICE_FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TWICE_FIBER_TSAN 1
#endif
#endif
#ifdef TWICE_FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#ifdef TWICE_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// On x86-64 without a sanitizer a switch saves the callee-saved registers on
// the stack it leaves and pops them from the one it enters, in user space.
// swapcontext() also saves and restores the signal mask, two system calls per
// switch (issue #12: 42 rt_sigprocmask calls per schedule). The sanitizers
// keep swapcontext(): their switch annotations are written against it.
#if defined(__x86_64__) && !defined(TWICE_FIBER_ASAN) && !defined(TWICE_FIBER_TSAN)
#define TWICE_FIBER_ASM 1
// twice_fiber_switch(save, to): pushes rbp, rbx, r12-r15 and the SSE and x87
// control words, stores the stack pointer in *save, loads `to` and pops the
// same from there. twice_fiber_start: where a new fiber's first switch
// returns to; calls r13(r12) and never returns.
asm(R"(
  .text
  .globl twice_fiber_switch
  .hidden twice_fiber_switch
  .type twice_fiber_switch,@function
twice_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size twice_fiber_switch,.-twice_fiber_switch

  .globl twice_fiber_start
  .hidden twice_fiber_start
  .type twice_fiber_start,@function
twice_fiber_start:
  movq %r12, %rdi
  call *%r13
  ud2
  .size twice_fiber_start,.-twice_fiber_start
)");
extern "C" void twice_fiber_switch(void** save, void* to);
extern "C" void twice_fiber_start();
#endif

namespace twice::sim {
namespace {

// As much as a thread gets by default; only the pages a task touches are
// ever backed by memory. The lowest page stays inaccessible, so an overflow
// faults instead of writing over something else.
constexpr std::size_t kStackSize = 8 << 20;

// Mapping a stack, faulting its first pages in and unmapping it cost more
// than the task's statements, and a run starts a task per delivery; so each
// thread keeps the stacks of its finished fibers for the next ones.
class StackCache {
 public:
  StackCache() = default;
  StackCache(const StackCache&) = delete;
  StackCache& operator=(const StackCache&) = delete;
  ~StackCache() {
    for (void* stack : free_) ::munmap(stack, kStackSize);
  }

  void* take() {
    if (free_.empty()) return map();
    void* stack = free_.back();
    free_.pop_back();
#ifdef TWICE_FIBER_ASAN
    // The last fiber's frames never returned (its entry switched away).
    ASAN_UNPOISON_MEMORY_REGION(stack, kStackSize);
#endif
    return stack;
  }

  void give(void* stack) {
    if (free_.size() < kKept) free_.push_back(stack);
    else ::munmap(stack, kStackSize);
  }

  std::size_t mapped() const { return mapped_; }

 private:
  // As many as a run keeps alive at once, within reason: a burst of 128
  // deliveries has over a hundred tasks parked on the write lock, and with
  // 16 kept every task past the sixteenth mapped, faulted in and unmapped a
  // stack of its own (about 30% of the samples of BM_Growth/burst/32 and /128, issue #12).
  // A kept stack costs the pages its tasks touched (tens of KiB) and 8 MiB
  // of address space, reserved for nothing (MAP_NORESERVE).
  static constexpr std::size_t kKept = 1024;

  void* map() {
    ++mapped_;
    void* stack = ::mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) throw std::bad_alloc();
    ::mprotect(stack, static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), PROT_NONE);  // the guard page
    return stack;
  }

  std::vector<void*> free_;
  std::size_t mapped_ = 0;
};

thread_local StackCache stacks;

// AddressSanitizer must be told when the stack changes under it, or it reports
// the other stack's frames as overflows. Without it these do nothing.
void start_switch(void** fake_stack_save, const void* bottom, std::size_t size) {
#ifdef TWICE_FIBER_ASAN
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
#else
  (void)fake_stack_save, (void)bottom, (void)size;
#endif
}

void finish_switch(void* fake_stack_save, const void** bottom_old, std::size_t* size_old) {
#ifdef TWICE_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, size_old);
#else
  (void)fake_stack_save, (void)bottom_old, (void)size_old;
#endif
}

// ThreadSanitizer keeps a shadow stack and a clock per thread: it must be told
// that a fiber is a context of its own, and when the thread switches to it.
// Without it these do nothing.
void* tsan_new_fiber() {
#ifdef TWICE_FIBER_TSAN
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}

void* tsan_current_fiber() {
#ifdef TWICE_FIBER_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}

void tsan_switch_to(void* fiber) {
#ifdef TWICE_FIBER_TSAN
  __tsan_switch_to_fiber(fiber, 0);
#else
  (void)fiber;
#endif
}

void tsan_destroy(void* fiber) {
#ifdef TWICE_FIBER_TSAN
  __tsan_destroy_fiber(fiber);
#else
  (void)fiber;
#endif
}

#ifndef TWICE_FIBER_ASM
// swapcontext(). Under AddressSanitizer, without its interceptor of
// swapcontext(): that one prints a warning, with the process id, into the
// program's output (which tests compare byte for byte) and clears the whole
// target stack's shadow at every switch. The switch annotations above tell
// AddressSanitizer all it needs; getcontext() and setcontext() pass through.
void switch_context(ucontext_t& from, const ucontext_t& to) {
#ifdef TWICE_FIBER_ASAN
  volatile bool resumed = false;
  ::getcontext(&from);  // returns a second time when someone switches back to `from`
  if (resumed) return;
  resumed = true;
  ::setcontext(&to);
#else
  ::swapcontext(&from, &to);
#endif
}
#endif

}  // namespace

Fiber::Fiber(std::function<void()> body) : body_(std::move(body)) {
  stack_size_ = kStackSize;
  stack_ = stacks.take();
  tsan_fiber_ = tsan_new_fiber();
#ifdef TWICE_FIBER_ASM
  // The frame twice_fiber_switch() pops: control words, r15, r14, r13 (what
  // to call), r12 (its argument), rbx, rbp, then the return address
  // twice_fiber_start, which finds the stack 16-byte aligned for its call.
  auto top = (reinterpret_cast<std::uintptr_t>(stack_) + stack_size_ - 16) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 72);
  frame[0] = 0x037F'0000'1F80ull;  // MXCSR 0x1F80 (low half), x87 control word 0x037F
  frame[1] = 0;                    // padding to 16 bytes
  frame[2] = 0;                    // r15
  frame[3] = 0;                    // r14
  frame[4] = reinterpret_cast<std::uint64_t>(&Fiber::start);  // r13
  frame[5] = reinterpret_cast<std::uint64_t>(this);           // r12
  frame[6] = 0;                                               // rbx
  frame[7] = 0;                                               // rbp
  frame[8] = reinterpret_cast<std::uint64_t>(&twice_fiber_start);
  fiber_sp_ = frame;
#else
  ::getcontext(&fiber_);
  fiber_.uc_stack.ss_sp = stack_;
  fiber_.uc_stack.ss_size = stack_size_;
  fiber_.uc_link = nullptr;  // entry() never returns: it switches back itself
  // makecontext passes int arguments only: the pointer travels in two halves.
  const auto self = reinterpret_cast<std::uintptr_t>(this);
  ::makecontext(&fiber_, reinterpret_cast<void (*)()>(&Fiber::entry), 2, static_cast<unsigned int>(self),
                static_cast<unsigned int>(self >> 32));
#endif
}

std::size_t Fiber::stacks_mapped() { return stacks.mapped(); }

Fiber::~Fiber() {
  tsan_destroy(tsan_fiber_);
  stacks.give(stack_);
}

void Fiber::entry(unsigned int low, unsigned int high) noexcept {
  start(reinterpret_cast<Fiber*>((static_cast<std::uintptr_t>(high) << 32) | low));
}

void Fiber::start(Fiber* self) noexcept {
  finish_switch(nullptr, &self->caller_stack_, &self->caller_stack_size_);
  self->body_();
  self->finished_ = true;
  // This stack is done with: nothing of it is to be kept.
  start_switch(nullptr, self->caller_stack_, self->caller_stack_size_);
  tsan_switch_to(self->caller_tsan_);
#ifdef TWICE_FIBER_ASM
  twice_fiber_switch(&self->fiber_sp_, self->caller_sp_);
#else
  ::setcontext(&self->caller_);
#endif
  std::terminate();  // never switched back to; setcontext() returns only on failure
}

void Fiber::resume() {
  swap_exception_state();
  void* fake_stack = nullptr;
  start_switch(&fake_stack, stack_, stack_size_);
  caller_tsan_ = tsan_current_fiber();
  tsan_switch_to(tsan_fiber_);
#ifdef TWICE_FIBER_ASM
  twice_fiber_switch(&caller_sp_, fiber_sp_);
#else
  switch_context(caller_, fiber_);
#endif
  finish_switch(fake_stack, nullptr, nullptr);
  swap_exception_state();
}

void Fiber::suspend() {
  void* fake_stack = nullptr;
  start_switch(&fake_stack, caller_stack_, caller_stack_size_);
  tsan_switch_to(caller_tsan_);
#ifdef TWICE_FIBER_ASM
  twice_fiber_switch(&fiber_sp_, caller_sp_);
#else
  switch_context(fiber_, caller_);
#endif
  finish_switch(fake_stack, &caller_stack_, &caller_stack_size_);
}

// Called on the resuming side only, before entering the fiber and after it
// comes back: the fiber finds its own exception state in place, and the
// resumer gets its own back. So a task that yields inside a catch block, or
// while an exception unwinds it, leaves no trace of that in the others.
void Fiber::swap_exception_state() {
  std::swap(*reinterpret_cast<ExceptionState*>(abi::__cxa_get_globals()), other_side_);
}

}  // namespace twice::sim
