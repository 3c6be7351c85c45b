#include "html_svg.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cell_verdict.h"
#include "escape.h"
#include "statistics.h"
#include "timeline.h"

namespace twice::reports {
namespace {

struct BoxStyle {
  const char* fill;
  const char* stroke;
};

bool is_write(const TimelineEntry& e) {
  const std::string label = short_label(e, 8);
  return label.starts_with("UPDATE") || label.starts_with("INSERT") || label.starts_with("DELETE") ||
         label.starts_with("REPLACE");
}

BoxStyle style_of(const TimelineEntry& e) {
  if (e.kind == "sql") return is_write(e) ? BoxStyle{"#d2e3fc", "#1967d2"} : BoxStyle{"#eef4fe", "#8ab4f8"};
  if (e.kind == "lock") return {"#f3e8fd", "#a142f4"};
  if (e.kind == "clock") return {"#fef7e0", "#f9ab00"};
  if (e.kind == "note") return {"#e6f4ea", "#34a853"};
  if (e.kind == "fault") return {"#fce8e6", "#d93025"};
  return {"#f1f3f4", "#9aa0a6"};  // task lifecycle and gateway events
}

// Characters of 12px monospace that fit in `width` pixels.
std::size_t chars_in(int width) { return static_cast<std::size_t>(std::max(4, (width - 16) / 7)); }

// `s` in lines of at most `width` code points, broken after a space where one
// falls in the line, else mid-word. Nothing is left out: a box must show the
// value that decided (status='WAIT_PAY' at the end of a SELECT's row) and a
// cut line hid exactly that.
std::vector<std::string> wrap_utf8(std::string_view s, std::size_t width) {
  std::vector<std::string> lines;
  std::vector<std::size_t> starts;  // byte offset of each code point
  for (std::size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  starts.push_back(s.size());
  const std::size_t points = starts.size() - 1;
  for (std::size_t first = 0; first < points;) {
    std::size_t end = std::min(points, first + width);
    if (end < points) {
      for (std::size_t k = end; k > first + 1; --k)
        if (s[starts[k - 1]] == ' ') {
          end = k;
          break;
        }
    }
    std::string line(s.substr(starts[first], starts[end] - starts[first]));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
    first = end;
  }
  if (lines.empty()) lines.emplace_back();
  return lines;
}

}  // namespace

std::string svg_swimlanes(const results::Counterexample& cex) {
  const auto timeline = build_timeline(cex);
  constexpr int kGutter = 104, kGatewayLane = 260, kTaskLane = 350, kHeader = 40, kRow = 28, kBox = 22, kLine = 15;
  const int lanes = static_cast<int>(cex.columns.size());
  const int width = kGutter + kGatewayLane + lanes * kTaskLane;
  auto lane_x = [&](int column) { return column < 0 ? kGutter : kGutter + kGatewayLane + column * kTaskLane; };
  auto lane_w = [&](int column) { return column < 0 ? kGatewayLane : kTaskLane; };
  // Each box's lines, and so each row's top: a box is as tall as its text.
  std::vector<std::vector<std::string>> texts;
  std::vector<int> tops;
  int height = kHeader;
  for (const auto& e : timeline) {
    const int w = lane_w(e.column) - 16;
    // A statement by its verb and table; any other entry (a gateway event, a
    // task's reply) whole: the wrapping keeps every word.
    std::string label = short_label(e, std::string::npos);
    if (!e.result.empty() && e.kind != "task") label += " → " + e.result;
    texts.push_back(wrap_utf8(label, chars_in(w)));
    tops.push_back(height);
    height += kRow + (static_cast<int>(texts.back().size()) - 1) * kLine;
  }
  height += 8;

  std::string out = fmt::format(
      "<svg class=\"swimlanes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"timeline of the counterexample, one lane per task\">\n",
      width, height);
  // Lane backgrounds and titles.
  for (int c = -1; c < lanes; ++c) {
    const std::string title = c < 0 ? "Gateway" : cex.columns[static_cast<std::size_t>(c)];
    out += fmt::format("<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", lane_x(c), lane_w(c) - 4,
                       height, c < 0 ? "#fafafa" : (c % 2 ? "#f7f9fc" : "#fbfcfe"));
    out += fmt::format("<g><title>{}</title><text x=\"{}\" y=\"24\" class=\"lane-title\">{}</text></g>\n",
                       html_escape(title), lane_x(c) + 8, html_escape(truncate_utf8(title, chars_in(lane_w(c)) - 2)));
  }
  out += fmt::format("<text x=\"8\" y=\"24\" class=\"lane-title\">step · time</text>\n");
  out += fmt::format("<line x1=\"0\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#dadce0\"/>\n", kHeader - 6, width);

  // The path control takes between steps, a faint line from box to box, is
  // drawn first so the boxes sit on top of it.
  std::string path;
  std::string boxes;
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    const auto& e = timeline[i];
    const auto& lines = texts[i];
    const int y = tops[i];
    const int x = lane_x(e.column) + 6;
    const int w = lane_w(e.column) - 16;
    const int box_h = kBox + (static_cast<int>(lines.size()) - 1) * kLine;
    if (e.column >= 0) path += fmt::format("{}{} {}", path.empty() ? "M" : " L", x + w / 2, y + box_h / 2);
    const BoxStyle st = style_of(e);
    std::string tooltip = e.time + "  " + (e.column < 0 ? "gateway " + e.kind + ": " : "") + e.text;
    if (!e.result.empty()) tooltip += "\n→ " + e.result;
    boxes += fmt::format("<g class=\"step\"><title>{}</title>", html_escape(tooltip));
    boxes += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" fill=\"{}\" stroke=\"{}\"/>", x, y,
                       w, box_h, st.fill, st.stroke);
    boxes += fmt::format("<text x=\"{}\" y=\"{}\" class=\"box\">", x + 8, y + 15);
    if (lines.size() == 1) {
      boxes += html_escape(lines.front());
    } else {
      for (std::size_t l = 0; l < lines.size(); ++l)
        boxes += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", x + 8, l == 0 ? 0 : kLine, html_escape(lines[l]));
    }
    boxes += "</text></g>\n";
    if (e.step > 0)
      boxes += fmt::format("<text x=\"8\" y=\"{}\" class=\"step-no\">{}</text>", y + 15, e.step);
    boxes += fmt::format("<text x=\"34\" y=\"{}\" class=\"time\">{}</text>\n", y + 15, html_escape(e.time));
  }
  if (!path.empty()) out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#bdc1c6\" stroke-dasharray=\"3 3\"/>\n", path);
  out += boxes;
  return out + "</svg>\n";
}

std::string svg_schedules_chart(const results::MatrixResult& m) {
  struct Bar {
    const results::CellResult* cell;
    CellStatistics stats;
  };
  std::vector<Bar> bars;
  int max_runs = 10;
  bool all_enumerated = true;  // every cell an exhaustive search's: its runs are schedules
  for (const auto& c : m.cells) {
    all_enumerated &= c.exhaustive.has_value();
    max_runs = std::max(max_runs, c.seeds_run);
    CellStatistics s = cell_statistics(c);
    if (s.first_failure) bars.push_back({&c, std::move(s)});
  }
  if (bars.empty()) return "<p class=\"muted\">No cell failed, so there is no time to first failure to chart.</p>\n";

  // Label cells by strategy only when the matrix mixes strategies.
  bool mixed = false;
  for (const auto& b : bars) mixed |= b.cell->strategy != bars.front().cell->strategy;
  constexpr int kLabel = 400, kPlot = 560, kValue = 190, kRow = 30, kTop = 30, kAxis = 40;
  const int width = kLabel + kPlot + kValue;
  const int height = kTop + static_cast<int>(bars.size()) * kRow + kAxis;
  // The scale starts a little below 1, so a failure on the very first
  // schedule still draws a bar.
  constexpr double kOrigin = 0.6;
  const double top_log = std::log10(max_runs / kOrigin);
  auto x_of = [&](double v) { return kLabel + kPlot * std::log10(std::max(1.0, v) / kOrigin) / top_log; };

  std::string out = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\" aria-label=\"schedules to first failure per cell, log scale\">\n",
      width, height);
  const int plot_bottom = kTop + static_cast<int>(bars.size()) * kRow;
  for (double tick = 1; tick <= max_runs; tick *= 10) {
    const double x = x_of(tick);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e8eaed\"/>", x, kTop - 6,
                       plot_bottom);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\">{:g}</text>\n", x, plot_bottom + 16, tick);
  }
  out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#9aa0a6\" "
                     "stroke-dasharray=\"4 3\"/><text x=\"{0:.1f}\" y=\"{3}\" class=\"tick\">{4} {5}</text>\n",
                     x_of(max_runs), kTop - 6, plot_bottom, kTop - 12, max_runs, all_enumerated ? "schedules" : "runs");
  out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis-label\">schedules (log scale){}</text>\n", kLabel,
                     plot_bottom + 34, mixed ? "" : fmt::format(", strategy {}", html_escape(bars.front().cell->strategy)));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& [c, s] = bars[i];
    const int y = kTop + static_cast<int>(i) * kRow;
    const CellVerdict v = verdict_of(c);
    const char* fill = differs(v) ? "#d93025" : "#f29900";
    const std::string label =
        fmt::format("{} × {}", c->handler, c->scenario) + (mixed ? fmt::format(" ({})", c->strategy) : "");
    // An exhaustive search's gaps between failures are an artefact of its
    // depth-first order, no typical gap: only its first failure is drawn.
    const std::string tooltip =
        s.enumerated ? fmt::format("{}: first failure at schedule {} ({} failing of {} schedules searched)", label,
                                   *s.first_failure, s.failures, s.runs)
                     : fmt::format("{}: first failure at schedule {}; median {:g} schedules between failures ({} failing "
                                   "of {} runs)",
                                   label, *s.first_failure, s.median_schedules.value_or(0), s.failures, s.runs);
    const double x_first = x_of(*s.first_failure);
    out += fmt::format("<g class=\"bar\"><title>{}</title>", html_escape(tooltip));
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"bar-label\">{}</text>", kLabel - 10, y + 15,
                       html_escape(truncate_utf8(label, 54)));
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"16\" rx=\"3\" fill=\"{}\"/>", kLabel, y + 3,
                       std::max(3.0, x_first - kLabel), fill);
    if (s.median_schedules && !s.enumerated) {
      const double xm = x_of(*s.median_schedules);
      out += fmt::format("<path d=\"M{0:.1f} {1} l5 6 l-5 6 l-5 -6 z\" fill=\"#202124\"/>", xm, y + 5);
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" class=\"bar-value\">first {}{}</text></g>\n", kLabel + kPlot + 12,
                       y + 15, *s.first_failure,
                       s.enumerated ? std::string()
                                    : " · median " + (s.median_schedules ? fmt::format("{:g}", *s.median_schedules) : "—"));
  }
  return out + "</svg>\n";
}

std::string svg_rate_interval(const results::CellResult& cell) {
  const CellStatistics s = cell_statistics(cell);
  constexpr int kWidth = 150, kHeight = 16, kPad = 4;
  auto x_of = [&](double p) { return kPad + (kWidth - 2 * kPad) * std::clamp(p, 0.0, 1.0); };
  std::string tooltip = fmt::format("observed {}, 95% interval {} to {}", format_percent(s.failure_rate),
                                    format_percent(s.wilson95.low), format_percent(s.wilson95.high));
  if (s.pct_lower_bound) tooltip += fmt::format(", PCT bound {}", format_percent(*s.pct_lower_bound));
  std::string out = fmt::format(
      "<svg class=\"interval\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\"><title>{2}</title>"
      "<line x1=\"{3}\" y1=\"8\" x2=\"{4}\" y2=\"8\" stroke=\"#dadce0\"/>",
      kWidth, kHeight, html_escape(tooltip), kPad, kWidth - kPad);
  out += fmt::format("<rect x=\"{:.1f}\" y=\"4\" width=\"{:.1f}\" height=\"8\" rx=\"2\" fill=\"#aecbfa\"/>",
                     x_of(s.wilson95.low), std::max(1.0, x_of(s.wilson95.high) - x_of(s.wilson95.low)));
  if (s.pct_lower_bound)
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"1\" x2=\"{0:.1f}\" y2=\"15\" stroke=\"#a142f4\" stroke-width=\"2\"/>",
                       x_of(*s.pct_lower_bound));
  out += fmt::format("<circle cx=\"{:.1f}\" cy=\"8\" r=\"3\" fill=\"#1967d2\"/></svg>", x_of(s.failure_rate));
  return out;
}

}  // namespace twice::reports
