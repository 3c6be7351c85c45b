#include "cli/stop_lines.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

#include "process/signal_safe_text.h"

namespace twice::cli {
namespace {

// A line built of parts and counts, then written at once.
class SignalLine {
 public:
  SignalLine& put(std::string_view part) {
    for (char c : part)
      if (n_ < sizeof text_) text_[n_++] = c;
    return *this;
  }
  SignalLine& count(int value) {
    n_ += process::put_decimal(static_cast<unsigned long>(std::max(value, 0)), text_ + n_, sizeof text_ - n_);
    return *this;
  }
  // "cell" or "cells", as `value` asks.
  SignalLine& noun(std::string_view noun, int value) { return put(noun).put(value == 1 ? "" : "s"); }
  SignalLine& is_are(int value) { return put(value == 1 ? " is" : " are"); }
  void write() const { [[maybe_unused]] const auto w = ::write(STDERR_FILENO, text_, n_); }

 private:
  char text_[256];
  std::size_t n_ = 0;
};

}  // namespace

void say_stopping_now(process::StopNow::Counts counts, std::string_view noun, int sig, bool clear_line) {
  const int done = counts.finished;
  const int under_way = counts.under_way();
  SignalLine line;
  if (clear_line) line.put("\r\x1b[K");
  line.put("twice: stopping now: the ").count(done).put(" finished ").noun(noun, done).is_are(done).put(" written; ");
  line.count(under_way).put(" ").noun(noun, under_way).put(" under way").is_are(under_way).put(" dropped");
  line.put(sig == SIGTERM ? "\n" : " (Ctrl-C again to stop at once, writing nothing)\n").write();
}

void say_dropped(int finished, std::string_view noun) {
  SignalLine()
      .put("\ntwice: stopped at once: ")
      .count(finished)
      .put(" finished ")
      .noun(noun, finished)
      .is_are(finished)
      .put(" not reported (one or two Ctrl-Cs write them)\n")
      .write();
}

void say_writing_overdue(unsigned seconds) {
  SignalLine()
      .put("\ntwice: stopped at once: writing took more than ")
      .count(static_cast<int>(seconds))
      .put(" s after the second stop ($TWICE_STOP_NOW_SECONDS); what it had not written is lost\n")
      .write();
}

}  // namespace twice::cli
