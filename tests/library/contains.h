// contains(text, part): whether a message holds a phrase; for the tests that
// check what twice told the user.
#pragma once

#include <string_view>

namespace twice::testing {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace twice::testing
