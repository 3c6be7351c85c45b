#include "cli/progress.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace twice::cli {

bool use_color(ColorMode mode, bool is_tty) {
  if (mode != ColorMode::kAuto) return mode == ColorMode::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  return is_tty && !(no_color && *no_color);
}

Progress::Progress(bool on_tty, bool quiet, std::size_t handlers, std::size_t cells_per_handler)
    : on_tty_(on_tty), quiet_(quiet), handlers_(handlers), cells_per_handler_(cells_per_handler) {}

void Progress::cell_done(const std::string& handler, const std::string& scenario, bool matched,
                         const std::string& shown, int done, int total) {
  if (quiet_) return;
  Tally& t = tally_[handler];
  ++t.cells;
  t.differing += !matched;
  if (on_tty_) {
    // Names come from the user (plugins, scenario files): cut, never wrap.
    std::string line = fmt::format("[{}/{}] {} × {}: {}", done, total, handler, scenario, shown);
    if (line.size() > 99) line = line.substr(0, 96) + "...";
    fmt::print(stderr, "\r\x1b[K{}", line);
    line_shown_ = true;
    if (done == total) finish();
    std::fflush(stderr);
    return;
  }
  if (t.cells != cells_per_handler_) return;
  ++handlers_done_;
  fmt::print(stderr, "[{}/{} handlers] {}: {} cell{}, {}\n", handlers_done_, handlers_, handler, t.cells,
             t.cells == 1 ? "" : "s",
             t.differing == 0 ? std::string("as expected")
                              : fmt::format("{} differ{} from the expected matrix", t.differing,
                                            t.differing == 1 ? "s" : ""));
  std::fflush(stderr);
}

void Progress::finish() {
  if (!on_tty_ || !line_shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  line_shown_ = false;
}

}  // namespace twice::cli
