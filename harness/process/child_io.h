// What a parent and the child it forked to contain a handler (a `twice run`
// cell, a `twice stress` run) both need: writing a whole message down a pipe,
// and naming the signal a child died by. Async-signal-safe where noted; no
// state.
#pragma once

#include <cstddef>
#include <string>

namespace twice::process {

// Writes all `size` bytes to `fd`, again after EINTR and short writes; false
// when the other end is gone or the write fails. Async-signal-safe.
bool write_all(int fd, const char* data, std::size_t size);

// "SIGSEGV", or "signal 42" for one without a name.
std::string signal_name(int sig);

// Flushes std::cout, std::cerr and every C stream: call just before fork(),
// so that nothing buffered is written twice (once by the child's exit).
void flush_before_fork();

}  // namespace twice::process
