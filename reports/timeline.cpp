#include "timeline.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "escape.h"

namespace twice::reports {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// "[      0.200s] gw   event notify O-1 acked" -> time, kind and text.
TimelineEntry parse_gateway_line(std::string_view line) {
  TimelineEntry e;
  e.kind = "event";
  std::string_view rest = trim(line);
  if (rest.starts_with('[')) {
    if (const auto close = rest.find(']'); close != std::string_view::npos) {
      e.time = std::string(trim(rest.substr(1, close - 1)));
      rest = trim(rest.substr(close + 1));
    }
  }
  if (rest.starts_with("gw ")) rest = trim(rest.substr(3));
  for (std::string_view kind : {"event ", "fault "}) {
    if (rest.starts_with(kind)) {
      e.kind = std::string(trim(kind));
      rest = trim(rest.substr(kind.size()));
    }
  }
  e.text = std::string(rest);
  return e;
}

}  // namespace

std::optional<double> parse_seconds(std::string_view time) {
  time = trim(time);
  bool negative = false;
  if (time.starts_with('-')) negative = true, time.remove_prefix(1);
  if (time.empty()) return std::nullopt;
  double total = 0;
  while (!time.empty()) {
    std::size_t n = 0;
    while (n < time.size() && (std::isdigit(static_cast<unsigned char>(time[n])) || time[n] == '.')) ++n;
    if (n == 0 || n == time.size()) return std::nullopt;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(time.data(), time.data() + n, value);
    if (ec != std::errc() || ptr != time.data() + n) return std::nullopt;
    const char unit = time[n];
    if (unit == 'h') total += value * 3600;
    else if (unit == 'm') total += value * 60;
    else if (unit == 's') total += value;
    else return std::nullopt;
    time.remove_prefix(n + 1);
  }
  return negative ? -total : total;
}

std::vector<TimelineEntry> build_timeline(const results::Counterexample& cex) {
  std::vector<TimelineEntry> rows;
  int step = 0;
  for (const auto& r : cex.rows) {
    const bool valid = r.column >= 0 && static_cast<std::size_t>(r.column) < cex.columns.size();
    if (r.step) ++step;  // numbered like the text report, even if the row is dropped
    if (!valid) continue;
    rows.push_back(TimelineEntry{r.column, r.time, r.kind, r.text, r.result, r.step ? step : 0});
    step += r.skipped;  // a "cut" row: the steps it leaves out keep their numbers
  }
  std::vector<TimelineEntry> out;
  out.reserve(rows.size() + cex.gateway.size());
  std::size_t next_row = 0;
  for (const auto& line : cex.gateway) {
    TimelineEntry g = parse_gateway_line(line);
    if (const auto at = parse_seconds(g.time)) {
      while (next_row < rows.size()) {
        const auto row_time = parse_seconds(rows[next_row].time);
        if (row_time && *row_time > *at) break;
        out.push_back(std::move(rows[next_row++]));
      }
    }
    out.push_back(std::move(g));
  }
  while (next_row < rows.size()) out.push_back(std::move(rows[next_row++]));
  return out;
}

std::string short_label(const TimelineEntry& e, std::size_t max_chars) {
  const auto w = words(e.text);
  std::string label;
  if (e.kind == "sql" && !w.empty()) {
    const std::string verb = upper(w[0]);
    auto after = [&](std::string_view keyword) -> std::string {
      for (std::size_t i = 1; i + 1 < w.size(); ++i)
        if (upper(w[i]) == keyword) {
          std::string_view table = w[i + 1];
          table = table.substr(0, table.find('('));
          return verb + " " + std::string(table);
        }
      return verb;
    };
    if (verb == "SELECT" || verb == "DELETE") label = after("FROM");
    else if (verb == "INSERT" || verb == "REPLACE") label = after("INTO");
    else if (verb == "UPDATE" && w.size() > 1) label = verb + " " + std::string(w[1]);
    else label = w.size() > 1 && (verb == "BEGIN" || verb == "SAVEPOINT") ? verb + " " + std::string(w[1]) : verb;
  } else if (e.kind == "lock" && w.size() >= 2) {
    label = std::string(w[0]) + " " + std::string(w[1]);
  } else {
    label = std::string(trim(e.text));
  }
  return truncate_utf8(label, max_chars);
}

}  // namespace twice::reports
