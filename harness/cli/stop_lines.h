// The lines twice says on stderr when a stop signal comes, for `twice run`
// and its black-box mode alike, so that both say the same thing in the same
// words of what they keep and drop. Written from signal handlers: no
// allocation, no stdio; async-signal-safe, any thread.
#pragma once

#include <string_view>

#include "process/stop_now.h"

namespace twice::cli {

// A stop now (a second Ctrl-C): "twice: stopping now: the 2 finished cells
// are written; 1 cell under way is dropped (Ctrl-C again to stop at once,
// writing nothing)". `noun` names the pieces of work ("cell", "run"); after
// SIGTERM nothing is said of another Ctrl-C; `clear_line` first erases a
// progress line on the terminal.
void say_stopping_now(process::StopNow::Counts counts, std::string_view noun, int sig, bool clear_line);

// A stop at once (a third Ctrl-C): "twice: stopped at once: 12 finished cells
// are not reported (one or two Ctrl-Cs write them)".
void say_dropped(int finished, std::string_view noun);

// The alarm set at a stop now went off before what was finished was written.
void say_writing_overdue(unsigned seconds);

}  // namespace twice::cli
