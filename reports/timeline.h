// A counterexample as one ordered list of who did what, for the reports that
// draw it (the Mermaid sequence diagram, the HTML swimlanes): the transcript
// rows, with the gateway's lines merged in by virtual time. Texts are still
// untrusted: each writer escapes them for its own language. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model.h"

namespace twice::reports {

struct TimelineEntry {
  int column = -1;      // a task column of the counterexample; -1: the gateway
  std::string time;     // as printed: "0.020s"; empty when a gateway line carries none
  std::string kind;     // "sql", "lock", "clock", "note", "task"; "event" or "fault" from the gateway
  std::string text;
  std::string result;
  int step = 0;         // 1-based scheduling point, as numbered in the text report; 0: not one
};

// Rows in transcript order (rows naming no valid column are dropped), each
// gateway line placed after every row at or before its time.
std::vector<TimelineEntry> build_timeline(const results::Counterexample& cex);

// Seconds from format_time's spelling: "0.020s", "1m02.003s", "1h00m02.003s".
std::optional<double> parse_seconds(std::string_view time);

// A few words naming what an entry did, for a box or an arrow: "SELECT orders",
// "INSERT ledger", "COMMIT", "SET lock:order:O-1", "starts notify O-1 #1".
std::string short_label(const TimelineEntry& e, std::size_t max_chars = 28);

}  // namespace twice::reports
