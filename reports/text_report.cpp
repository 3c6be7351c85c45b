#include "text_report.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "cell_verdict.h"
#include "escape.h"

namespace twice::reports {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string paint(const TextOptions& o, const char* code, const std::string& s) {
  return o.color ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
}

// Columns are counted in code points, and text is cut between them, never
// inside one: a cut multi-byte character would leave invalid UTF-8 on the
// terminal. (ASCII text: one byte, one column.)
std::size_t columns(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The bytes of the first n code points of s (all of s when it has fewer).
std::size_t prefix_bytes(std::string_view s, std::size_t n) {
  std::size_t i = 0;
  for (std::size_t seen = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen++ == n) break;
  }
  return i;
}

std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string rest = terminal_text(text);
  while (columns(rest) > width) {
    const std::size_t limit = prefix_bytes(rest, width);
    std::size_t cut = rest.rfind(' ', limit);
    if (cut == std::string::npos || columns(std::string_view(rest).substr(0, cut)) < width / 2) cut = limit;
    lines.push_back(rest.substr(0, cut));
    rest = rest.substr(cut == limit ? cut : cut + 1);
  }
  lines.push_back(rest);
  return lines;
}

std::string pad(const std::string& s, std::size_t width) {
  const std::size_t used = columns(s);
  return used >= width ? s : s + std::string(width - used, ' ');
}

// At most `width` columns of s.
std::string first_columns(const std::string& s, std::size_t width) { return s.substr(0, prefix_bytes(s, width)); }

}  // namespace

namespace {

// One character per cell: what it showed and whether that was expected.
char cell_symbol(const results::CellResult* c) {
  if (!c) return '-';
  if (!c->failures.empty()) return 'F';
  if (!c->matched) return '!';
  return c->violations.empty() ? '.' : 'x';
}

const char* symbol_color(char symbol) {
  switch (symbol) {
    case '.': return "32";
    case 'x': return "33";
    case '-': return "2";
    default: return "1;31";
  }
}

// Text of the user's (a handler's or scenario's name) cut to fit a column.
std::string fitted(const std::string& name, std::size_t width) {
  const std::string p = terminal_text(name);
  return columns(p) <= width ? p : first_columns(p, width - 1) + "~";
}

// Words laid out on lines of at most `width` columns, each line indented.
std::string flow(const std::vector<std::string>& items, std::size_t width, const std::string& indent) {
  std::string out, line = indent;
  for (const auto& item : items) {
    if (line.size() > indent.size() && line.size() + 2 + item.size() > width) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? "  " : "") + item;
  }
  return line.size() > indent.size() ? out + line + "\n" : out;
}


// A transcript longer than kRowsShown rows (a handler that polls the
// database until its step budget kills it: tens of thousands) shows its first
// kHeadRows and last kTailRows, and says what it leaves out; the replay
// command prints it whole, where a test's failure message printed it all.
constexpr std::size_t kHeadRows = 150, kTailRows = 100, kRowsShown = 300;

// Whether line i of n is left out (a long transcript's rows, a long run's
// gateway lines): past kRowsShown lines, all but the first kHeadRows and the
// last kTailRows.
bool left_out(std::size_t i, std::size_t n) { return n > kRowsShown && i >= kHeadRows && i < n - kTailRows; }

// Past this many tasks a table of a column each is no longer read (a run of
// thousands of deliveries made lines of 800 KB): the transcript is a list.
constexpr std::size_t kMostColumns = 32;

// Calls row(r, step) for each row a transcript shows, `step` the number of
// the step it is (0: not a step); past kRowsShown rows, the first kHeadRows
// and the last kTailRows, with a line in `out` saying how many are left out.
// Steps are numbered as the run took them, the rows left out counted too.
void for_each_shown_row(const results::Counterexample& cex, std::string& out,
                        const std::function<void(const results::TranscriptRow&, int)>& row) {
  int step = 0;
  const std::size_t rows = cex.rows.size();
  for (std::size_t i = 0; i < rows; ++i) {
    const auto& r = cex.rows[i];
    if (left_out(i, rows)) {
      if (i == kHeadRows)
        out += fmt::format("  ... {} rows not shown here; the replay command below prints the whole run\n",
                           rows - kHeadRows - kTailRows);
      if (r.step) ++step;
      step += r.skipped;
      continue;
    }
    row(r, r.step ? ++step : 0);
    step += r.skipped;
  }
}

// The transcript as a list, for runs of more tasks than a table can show:
// each line says its task ("T12: ..."), steps numbered as in the table.
std::string transcript_list(const results::Counterexample& cex, std::size_t w) {
  std::string out;
  std::size_t tw = 10;
  for (const auto& r : cex.rows) tw = std::max(tw, columns(r.time) + 1);
  out += fmt::format("  ({} tasks: too many for a column each; each line names its task)\n", cex.columns.size());
  for_each_shown_row(cex, out, [&](const results::TranscriptRow& r, int step) {
    const std::string task = r.column >= 0 && static_cast<std::size_t>(r.column) < cex.columns.size()
                                 ? first_columns(cex.columns[static_cast<std::size_t>(r.column)], 40)
                                 : std::string();  // wrap() below escapes it with the rest
    std::string text = (task.empty() ? "" : task + ": ") + r.text;
    if (!r.result.empty()) text += "  -> " + r.result;
    const auto lines = wrap(text, std::max<std::size_t>(w, kTextWidth - 7 - tw));
    for (std::size_t li = 0; li < lines.size(); ++li) {
      std::string line = "  ";
      line += li == 0 ? pad(step ? std::to_string(step) : "", 5) + pad(r.time, tw) : std::string(5 + tw, ' ');
      line += lines[li];
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  });
  return out;
}

// The transcript: a column per task, a row per line; steps numbered as the
// run took them (a "cut" row stands for the steps it leaves out).
std::string transcript_table(const results::Counterexample& cex, std::size_t w) {
  if (cex.columns.size() > kMostColumns) return transcript_list(cex, w);
  std::string out;
  // The time column fits its longest time ("53h03m15.900s"), so the bars stay in line.
  std::size_t tw = 10;
  for (const auto& r : cex.rows) tw = std::max(tw, columns(r.time) + 1);
  std::string header = "  " + pad("step", 5) + pad("time", tw);
  for (const auto& col : cex.columns) header += "| " + pad(first_columns(terminal_text(col), w - 1), w);
  out += header + "\n";
  for_each_shown_row(cex, out, [&](const results::TranscriptRow& r, int step) {
    std::string text = r.text;
    if (!r.result.empty()) text += "  -> " + r.result;
    const auto lines = wrap(text, w - 1);
    for (std::size_t li = 0; li < lines.size(); ++li) {
      std::string line = "  ";
      if (li == 0) line += pad(step ? std::to_string(step) : "", 5) + pad(r.time, tw);
      else line += std::string(5 + tw, ' ');
      for (std::size_t c = 0; c < cex.columns.size(); ++c)
        line += "| " + pad(static_cast<int>(c) == r.column ? lines[li] : "", w);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  });
  return out;
}

}  // namespace

std::string render_matrix(const results::MatrixResult& m, const TextOptions& o) {
  constexpr std::size_t kMaxHandler = 28;
  std::size_t hw = 7;
  for (const auto& h : m.handlers) hw = std::min(kMaxHandler, std::max(hw, terminal_text(h).size()));
  const std::size_t n = m.scenarios.size();
  // Each scenario's column is as wide as its number, plus a space.
  const std::size_t cw = std::to_string(std::max<std::size_t>(n, 1)).size() + 1;
  const std::size_t per_block = std::max<std::size_t>(1, (kTextWidth - hw) / cw);
  std::string out;
  for (std::size_t first = 0; first < n || (n == 0 && first == 0); first += per_block) {
    const std::size_t last = std::min(n, first + per_block);
    std::string header = pad("handler", hw);
    for (std::size_t j = first; j < last; ++j) {
      const std::string number = std::to_string(j + 1);
      header += std::string(cw - number.size(), ' ') + number;
    }
    out += header + "\n";
    for (const auto& h : m.handlers) {
      std::string line = pad(fitted(h, hw), hw);
      for (std::size_t j = first; j < last; ++j) {
        const char symbol = cell_symbol(m.cell(h, m.scenarios[j]));
        line += std::string(cw - 1, ' ') + paint(o, symbol_color(symbol), std::string(1, symbol));
      }
      out += line + "\n";
    }
    if (n == 0) break;
    if (last < n) out += "\n";
  }
  out += "\n";
  std::vector<std::string> legend;
  for (std::size_t j = 0; j < n; ++j) legend.push_back(fmt::format("{} {}", j + 1, fitted(m.scenarios[j], kTextWidth - 8)));
  out += flow(legend, kTextWidth, "");
  if (is_exhaustive(m))  // no seeds: every schedule within the bounds
    out += fmt::format("strategy {}.\n", terminal_text(m.strategy));
  else
    out += fmt::format("{} seeds per cell, strategy {}, base seed {}.\n", m.seeds, terminal_text(m.strategy), m.base_seed);
  for (const auto& server : m.servers)
    out += server_sentence(server, [](std::string_view s) { return terminal_text(s); }) + ".\n";
  out += ". = pass, x = a violation it is expected to show, F = the cell failed, - = not run;\n";
  out += "! = differs from " + compared_with(m, terminal_text(m.expected_path)) + "\n";
  return out;
}

std::string render_verdict(const results::MatrixResult& m, const TextOptions& o) {
  std::size_t differing = 0;
  for (const auto& c : m.cells) differing += !c.matched;
  std::string out;
  if (m.interrupted) out += paint(o, "1;33", "interrupted: the matrix is incomplete") + "\n";
  if (differing == 0 && !m.interrupted) {
    out += paint(o, "1;32", fmt::format("matrix matches {} ({} cell{})", compared_with(m, terminal_text(m.expected_path)),
                                        m.cells.size(), m.cells.size() == 1 ? "" : "s")) + "\n";
  } else if (differing > 0) {
    out += paint(o, "1;31", fmt::format("{} cell{} from {}", differing, differing == 1 ? " differs" : "s differ",
                                        compared_with(m, terminal_text(m.expected_path)))) + "\n";
  }
  return out;
}

std::string render_counterexample(const results::CellResult& cell, const results::ViolationResult& v,
                                  const TextOptions& o) {
  const auto& cex = v.counterexample;
  std::string out;
  out += paint(o, "1", terminal_text(fmt::format("{} × {}: {}", cell.handler, cell.scenario, v.invariant))) + "\n";
  out += fmt::format("  {}\n", terminal_text(v.detail));
  if (cex.preemptions >= 0)  // the exhaustive search's: no seed, a schedule
    out += fmt::format("  first seen in schedule {}; {} of {} schedules showed it; this one has {} preemption{}{}\n",
                       v.schedules_to_first, v.failures, cell.seeds_run, cex.preemptions, cex.preemptions == 1 ? "" : "s",
                       cex.found_at_bound > 0 ? fmt::format(" (searched at bound {} first: none showed it)",
                                                            cex.found_at_bound == 1 ? std::string("0")
                                                                                    : fmt::format("0 to {}", cex.found_at_bound - 1))
                                              : std::string());
  else
    out += fmt::format("  first seen after {} schedule{} (seed {}); {} of {} runs showed it\n", v.schedules_to_first,
                       v.schedules_to_first == 1 ? "" : "s", v.seed, v.failures, cell.seeds_run);
  if (cex.detail.empty()) {
    // Run again to be shrunk, after the cell's other runs and in the same
    // process, the seed did not show the violation (a handler that keeps
    // state across runs or is nondeterministic): no story to tell. Whether it
    // shows alone in a fresh process, the cell's re-check says.
    out += "  run again after the cell's other runs, to be shrunk, its seed did not show it: no transcript to show (the\n"
           "  handler keeps state from one run to the next, or is nondeterministic)\n";
    out += fmt::format("\n  replay the failing run:   {}\n", terminal_text(cex.replay_command));
    return out;
  }
  const std::string shrunk = cex.shrunk ? "shrunk to" : "not shrunk (a shrink budget of 0):";
  const std::string hidden =
      cex.hidden_steps ? fmt::format(" ({} steps of unrelated tasks hidden)", cex.hidden_steps) : "";
  if (cex.rows.empty()) {
    // Every notify of the order lost on the way, say: the story is the gateway's.
    out += fmt::format("  {} 0 steps: no handler task ran for it{}\n", shrunk, hidden);
  } else {
    out += fmt::format("  {} {} step{}{}:\n\n", shrunk, cex.steps, cex.steps == 1 ? "" : "s", hidden);
    out += transcript_table(cex, static_cast<std::size_t>(o.column_width));
  }
  if (!cex.gateway.empty()) {
    out += "\n  gateway:\n";
    // A run of thousands of deliveries: its first and last lines, as for a long transcript.
    const std::size_t n = cex.gateway.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (left_out(i, n)) {
        if (i == kHeadRows)
          out += fmt::format("    ... {} lines not shown here; the replay command below prints them all\n",
                             n - kHeadRows - kTailRows);
        continue;
      }
      out += "    " + terminal_text(cex.gateway[i]) + "\n";
    }
  }
  out += "\n  balances at the end:\n";
  for (const auto& b : cex.balances) out += "    " + terminal_text(b) + "\n";
  if (!cex.effects.empty()) {
    out += "\n  effects at the end (what the services applied):\n";
    for (const auto& e : cex.effects) out += "    " + terminal_text(effect_line(e)) + "\n";
  }
  out += fmt::format("\n  replay the failing run:   {}\n", terminal_text(cex.replay_command));
  out += fmt::format("  replay this counterexample: {}\n", terminal_text(cex.replay_shrunk_command));
  return out;
}

TextOptions fitted_to_width(const results::Counterexample& cex, TextOptions options) {
  const int columns = std::max<int>(1, static_cast<int>(cex.columns.size()));
  options.column_width =
      std::max(24, std::min(options.column_width, (static_cast<int>(kTextWidth) - 17) / columns - 2));
  return options;
}

std::string render_text(const results::MatrixResult& m, const TextOptions& o) {
  std::string out = render_verdict(m, o) + "\n" + render_matrix(m, o);
  // Only under --strategy exhaustive: what was proved, cell by cell; with --coverage, how much was run.
  for (const auto& c : m.cells) {
    if (const std::string proof = exhaustive_sentence(c); !proof.empty())
      out += fmt::format("{} × {}: {}\n", terminal_text(c.handler), terminal_text(c.scenario), proof);
    if (const std::string left = processes_left_sentence(c.processes_left, "cell"); !left.empty())
      out += fmt::format("{} × {}: {}\n", terminal_text(c.handler), terminal_text(c.scenario), left);
    if (c.distinct_schedules >= 0)
      out += fmt::format("{} × {}: {} seeds ran {} distinct interleaving{}\n", terminal_text(c.handler),
                         terminal_text(c.scenario), c.seeds_run, c.distinct_schedules, c.distinct_schedules == 1 ? "" : "s");
  }
  std::size_t hidden = 0;
  for (const auto& c : m.cells) {
    if (c.matched && !o.show_all) {
      hidden += c.violations.size();
      continue;
    }
    for (const auto& v : c.violations) out += "\n" + render_counterexample(c, v, fitted_to_width(v.counterexample, o));
    for (const auto& f : c.failures) out += "\n" + render_failure(c, f, o);
  }
  std::vector<std::string> mismatches;
  for (const auto& c : m.cells) {
    if (c.matched) continue;
    if (verdict_of(&c) == CellVerdict::kNotProved) {
      mismatches.push_back(fmt::format("  {} × {}: {}", terminal_text(c.handler), terminal_text(c.scenario),
                                       terminal_text(mismatch_sentence(c))));
      continue;
    }
    const std::string expected = c.expected.empty() ? "pass" : join(c.expected, "+");
    std::vector<std::string> seen;
    for (const auto& f : c.failures) seen.push_back(f.verdict);
    for (const auto& v : c.violations) seen.push_back(fmt::format("{} {}/{}", v.invariant, v.failures, c.seeds_run));
    const std::string observed = seen.empty() ? "pass" : terminal_text(join(seen, ", "));
    mismatches.push_back(fmt::format("  {} × {}: expected {}, observed {}{}", terminal_text(c.handler),
                                     terminal_text(c.scenario), expected, observed,
                                     !c.failures.empty() ? std::string(" (the cell failed)")
                                                         : terminal_text(difference_label(c))));
  }
  out += "\n";
  if (!mismatches.empty()) {
    out += fmt::format("{} cell{} from {}:\n", mismatches.size(), mismatches.size() == 1 ? " differs" : "s differ",
                       compared_with(m, terminal_text(m.expected_path)));
    out += join(mismatches, "\n") + "\n";
    out += "  " + intended_difference_hint(m, terminal_text(m.expected_path)) + "\n";
  }
  std::vector<std::string> cut;
  for (const auto& c : m.cells)
    if (c.cut_short)
      cut.push_back(fmt::format("  {} × {}: {} of {} seeds", terminal_text(c.handler), terminal_text(c.scenario),
                                c.seeds_run, m.seeds));
  if (!cut.empty())
    out += fmt::format("cut short by the stop (each verdict is of the seeds that ran):\n{}\n", join(cut, "\n"));
  for (const auto& [what, to_do] : unseen_bug_caveats(m)) out += fmt::format("note: {}:\n  {}\n", what, to_do);
  if (hidden > 0)
    out += fmt::format("{} counterexample{} of known bugs caught as expected not shown (--show all shows them)\n",
                       hidden, hidden == 1 ? "" : "s");
  if (!o.reports_at.empty()) out += "full reports: " + terminal_text(o.reports_at) + "\n";
  return out + render_verdict(m, o);
}

// A cell that did not finish, or whose counterexample did not reproduce.
std::string render_failure(const results::CellResult& cell, const results::CellFailure& f, const TextOptions& o) {
  std::string out = paint(o, "1", terminal_text(fmt::format("{} × {}: {}", cell.handler, cell.scenario, f.verdict))) + "\n";
  out += fmt::format("  {}\n", terminal_text(f.detail));
  if (!f.replay_command.empty()) out += fmt::format("\n  replay that run:   {}\n", terminal_text(f.replay_command));
  return out;
}

}  // namespace twice::reports
