#include "explore/shell_quote.h"

namespace twice::explore {

std::string shell_quote(std::string_view word) {
  const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_@%+=:,./-") == std::string_view::npos;
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

}  // namespace twice::explore
