#pragma once
// Text helpers below every folder that writes text: the gateway's wire
// formats and the report writers both encode code points they decoded or
// replaced. Header-only, so that it is no module of its own; the report
// writers, which see only the public API and the result model, see this too.

#include <string>

namespace twice::text {

// Appends `cp` (at most U+10FFFF, no surrogate: callers pass what they
// decoded or U+FFFD) to `out` as UTF-8.
inline void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace twice::text
