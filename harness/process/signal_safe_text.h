// Text written from a signal handler: no allocation, no locale, no stdio.
// Async-signal-safe; any thread.
#pragma once

#include <cstddef>

namespace twice::process {

// `value` in decimal at out[0..], at most `room` characters (the lowest
// digits are the ones dropped when it does not fit); the count written.
inline std::size_t put_decimal(unsigned long value, char* out, std::size_t room) {
  char digits[24];
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < sizeof digits);
  std::size_t length = 0;
  while (n > 0 && length < room) out[length++] = digits[--n];
  return length;
}

}  // namespace twice::process
