#include "cli/progress.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "reports/escape.h"

namespace twice::cli {

bool use_color(ColorMode mode, bool is_tty) {
  if (mode != ColorMode::kAuto) return mode == ColorMode::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  return is_tty && !(no_color && *no_color);
}

Progress::Progress(bool on_tty, bool quiet, std::size_t handlers, std::size_t cells_per_handler, std::string part,
                   std::function<double()> now_seconds)
    : on_tty_(on_tty),
      quiet_(quiet),
      handlers_(handlers),
      cells_per_handler_(cells_per_handler),
      total_(static_cast<int>(handlers * cells_per_handler)),
      part_(std::move(part)),
      now_(now_seconds ? std::move(now_seconds) : [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      }) {
  last_line_ = now_();
}

void Progress::cell_done(const std::string& handler, const std::string& scenario, bool matched,
                         const std::string& shown, int done, int total) {
  if (quiet_) return;
  done_ = done;
  total_ = total;
  Tally& t = tally_[handler];
  ++t.cells;
  t.differing += !matched;
  if (on_tty_) {
    // Names come from the user (plugins, scenario files): escaped, cut, never wrap.
    std::string line = fmt::format("[{}/{}] {} × {}: {}", done, total, reports::terminal_text(handler),
                                   reports::terminal_text(scenario), shown);
    if (line.size() > 99) line = line.substr(0, 96) + "...";
    fmt::print(stderr, "\r\x1b[K{}", line);
    line_shown_ = true;
    if (done == total) finish();
    std::fflush(stderr);
    return;
  }
  if (t.cells != cells_per_handler_) return;
  ++handlers_done_;
  last_line_ = now_();
  fmt::print(stderr, "[{}/{} handlers{}] {}: {} cell{}, {}\n", handlers_done_, handlers_,
             part_.empty() ? "" : ", " + part_, handler, t.cells,
             t.cells == 1 ? "" : "s",
             t.differing == 0 ? std::string("as expected")
                              : fmt::format("{} differ{} from the expected matrix", t.differing,
                                            t.differing == 1 ? "s" : ""));
  std::fflush(stderr);
}

void Progress::under_way(const std::string& handler, const std::string& scenario, std::string_view phase, int run,
                         double seconds) {
  if (quiet_ || (on_tty_ && seconds < 2)) return;
  const std::string cell = fmt::format("{} × {}", reports::terminal_text(handler), reports::terminal_text(scenario));
  const std::string doing =
      run > 0 ? fmt::format("{}, run {}{}", reports::terminal_text(std::string(phase)), run,
                            phase == "exploring" && runs_per_cell_ > 0
                                ? fmt::format(" of {}{}", at_most_ ? "at most " : "", runs_per_cell_)
                                : std::string())
              : reports::terminal_text(std::string(phase));
  if (on_tty_) {
    std::string line = fmt::format("[{}/{}] {}: {} ({:.0f} s)", done_, total_, cell, doing, seconds);
    if (line.size() > 99) line = line.substr(0, 96) + "...";
    fmt::print(stderr, "\r\x1b[K{}", line);
    line_shown_ = true;
    std::fflush(stderr);
    return;
  }
  const int minutes = static_cast<int>(seconds / 60);
  int& told = minutes_told_[cell];
  const double now = now_();
  const std::string where = part_.empty() ? "" : fmt::format(" ({})", part_);
  if (minutes >= 1 && minutes > told) {
    told = minutes;
    fmt::print(stderr, "twice: {}{} still running after {} min: {}\n", cell, where, minutes, doing);
  } else if (now - last_line_ >= 60) {
    // Short cells, but a minute without a line (a server engine's handler).
    fmt::print(stderr, "twice: {} of {} cells done{}; under way: {}: {}\n", done_, total_, where, cell, doing);
  } else {
    return;
  }
  last_line_ = now;
  std::fflush(stderr);
}

void Progress::finish() {
  if (!on_tty_ || !line_shown_) return;
  fmt::print(stderr, "\r\x1b[K");
  std::fflush(stderr);
  line_shown_ = false;
}

}  // namespace twice::cli
