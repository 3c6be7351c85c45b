// What `twice run` shows while it runs, on stderr: on a terminal one line
// rewritten per finished cell; elsewhere (CI, a pipe) one line per handler
// whose cells are all done, a line a minute for a cell that runs longer, and
// a line whenever a minute passed without one, so a log is never silent for
// minutes (a server engine's handler can take several). And whether the
// report on stdout is coloured (--color, NO_COLOR).
// Not thread-safe: the explorer calls on_cell and on_progress from one thread
// at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace twice::cli {

enum class ColorMode { kAuto, kAlways, kNever };

// always/never win; auto colours a terminal unless NO_COLOR is set to
// anything non-empty (https://no-color.org).
bool use_color(ColorMode mode, bool is_tty);

class Progress {
 public:
  // on_tty: stderr is a terminal. quiet: print nothing at all.
  // cells_per_handler: how many cells each handler has in this part of the run.
  // part: which part of the run this is, when there are several or it is not
  // the default engine ("postgres/read-committed, 2 of 7"); said in every
  // line. now_seconds: a steady clock (tests give their own).
  Progress(bool on_tty, bool quiet, std::size_t handlers, std::size_t cells_per_handler, std::string part = {},
           std::function<double()> now_seconds = {});

  void cell_done(const std::string& handler, const std::string& scenario, bool matched, const std::string& shown,
                 int done, int total);
  // A cell under way for `seconds` (ExploreOptions::on_progress): after 2 s,
  // on a terminal the rewritten line says what it is doing ("exploring, run
  // 12345"); elsewhere a line a minute, so a CI log of a long exhaustive
  // search is not silent until the cell ends, and a line when nothing was
  // printed for a minute, whichever cell it is about.
  void under_way(const std::string& handler, const std::string& scenario, std::string_view phase, int run,
                 double seconds);
  // How many runs a cell explores, for "exploring, run 43317 of 100000"; at
  // most: an exhaustive search's budget ("of at most 20000"). 0: not said.
  void runs_per_cell(int runs, bool at_most) {
    runs_per_cell_ = runs;
    at_most_ = at_most;
  }
  // Clears the rewritten line, so the next text starts at column 0 (also
  // after Ctrl-C, when the last cell's line was never followed by done == total).
  void finish();

 private:
  struct Tally {
    std::size_t cells = 0;
    std::size_t differing = 0;
  };
  bool on_tty_;
  bool quiet_;
  std::size_t handlers_;
  std::size_t cells_per_handler_;
  std::size_t handlers_done_ = 0;
  bool line_shown_ = false;
  int done_ = 0, total_ = 0;
  int runs_per_cell_ = 0;
  bool at_most_ = false;
  std::map<std::string, int> minutes_told_;  // per cell, off a terminal
  std::map<std::string, Tally> tally_;
  std::string part_;
  std::function<double()> now_;
  double last_line_ = 0;  // now_() when a line was last printed, off a terminal
};

}  // namespace twice::cli
