// shell_quote: a word as a POSIX shell reads it back unchanged, for the replay
// commands every report prints for pasting. A scenario path is the user's,
// and may hold `$(...)`, quotes or spaces: pasted unquoted it would run or
// split. Words made only of characters no shell treats specially are left as
// they are, so that the usual commands read as before. Pure; any thread.
#pragma once

#include <string>
#include <string_view>

namespace twice::explore {

// "cas" -> cas; "a b" -> 'a b'; "it's" -> 'it'\''s'; "" -> ''.
std::string shell_quote(std::string_view word);

}  // namespace twice::explore
