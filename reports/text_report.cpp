#include "text_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "cell_verdict.h"

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

// Terminal text from an untrusted source: control characters become visible.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    if (ch == '\n') out += "\\n";
    else if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);
    else out += static_cast<char>(ch);
  }
  return out;
}

std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string rest = printable(text);
  while (rest.size() > width) {
    std::size_t cut = rest.rfind(' ', width);
    if (cut == std::string::npos || cut < width / 2) cut = width;
    lines.push_back(rest.substr(0, cut));
    rest = rest.substr(cut == width ? cut : cut + 1);
  }
  lines.push_back(rest);
  return lines;
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string cell_text(const results::CellResult& c) {
  std::vector<std::string> parts;
  for (const auto& f : c.failures) parts.push_back(f.verdict);
  for (const auto& v : c.violations) parts.push_back(fmt::format("{} {}/{}", v.invariant, v.failures, c.seeds_run));
  return parts.empty() ? "pass" : printable(join(parts, ", "));
}

// A cell that did not finish, or whose counterexample did not reproduce.
std::string render_failure(const results::CellResult& cell, const results::CellFailure& f, const TextOptions& o) {
  std::string out = paint(o, "1", printable(fmt::format("{} × {}: {}", cell.handler, cell.scenario, f.verdict))) + "\n";
  out += fmt::format("  {}\n", printable(f.detail));
  if (!f.replay_command.empty()) out += fmt::format("\n  replay that run:   {}\n", f.replay_command);
  return out;
}

}  // namespace

std::string render_matrix(const results::MatrixResult& m, const TextOptions& o) {
  std::size_t hw = 7;
  for (const auto& h : m.handlers) hw = std::max(hw, h.size());
  std::vector<std::size_t> widths;
  for (const auto& s : m.scenarios) {
    std::size_t w = s.size();
    for (const auto& c : m.cells)
      if (c.scenario == s) w = std::max(w, cell_text(c).size() + 2);
    widths.push_back(w);
  }
  std::string out = pad("handler", hw);
  for (std::size_t j = 0; j < m.scenarios.size(); ++j) out += "  " + pad(m.scenarios[j], widths[j]);
  out += '\n';
  for (const auto& h : m.handlers) {
    out += pad(h, hw);
    for (std::size_t j = 0; j < m.scenarios.size(); ++j) {
      const results::CellResult* c = m.cell(h, m.scenarios[j]);
      std::string text = c ? cell_text(*c) : "(not run)";
      std::string mark = !c ? "  " : c->matched ? "  " : " !";
      std::string shown = pad(text + mark, widths[j]);
      const char* color = !c ? "2" : !c->matched ? "1;31" : c->violations.empty() ? "32" : "33";
      out += "  " + paint(o, color, shown);
    }
    out += '\n';
  }
  out += fmt::format("{} seeds per cell, strategy {}, base seed {}. ", m.seeds, m.strategy, m.base_seed);
  out += "pass = no violation; a violation is shown as caught/runs; ! = differs from " + printable(m.expected_path) +
         "\n";
  return out;
}

std::string render_counterexample(const results::CellResult& cell, const results::ViolationResult& v,
                                  const TextOptions& o) {
  const auto& cex = v.counterexample;
  std::string out;
  out += paint(o, "1", fmt::format("{} × {}: {}", cell.handler, cell.scenario, v.invariant)) + "\n";
  out += fmt::format("  {}\n", printable(v.detail));
  out += fmt::format("  first seen after {} schedule{} (seed {}); {} of {} runs showed it\n", v.schedules_to_first,
                     v.schedules_to_first == 1 ? "" : "s", v.seed, v.failures, cell.seeds_run);
  out += fmt::format("  shrunk to {} step{}{}:\n\n", cex.steps, cex.steps == 1 ? "" : "s",
                     cex.hidden_steps ? fmt::format(" ({} steps of unrelated tasks hidden)", cex.hidden_steps) : "");

  const std::size_t w = static_cast<std::size_t>(o.column_width);
  std::string header = "  " + pad("step", 5) + pad("time", 10);
  for (const auto& col : cex.columns) header += "| " + pad(col.substr(0, w - 1), w);
  out += header + "\n";
  int step = 0;
  for (const auto& r : cex.rows) {
    std::string text = r.text;
    if (!r.result.empty()) text += "  -> " + r.result;
    const auto lines = wrap(text, w - 1);
    for (std::size_t li = 0; li < lines.size(); ++li) {
      std::string line = "  ";
      if (li == 0) line += pad(r.step ? std::to_string(++step) : "", 5) + pad(r.time, 10);
      else line += std::string(15, ' ');
      for (std::size_t c = 0; c < cex.columns.size(); ++c)
        line += "| " + pad(static_cast<int>(c) == r.column ? lines[li] : "", w);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
  }
  if (!cex.gateway.empty()) {
    out += "\n  gateway:\n";
    for (const auto& g : cex.gateway) out += "    " + printable(g) + "\n";
  }
  out += "\n  balances at the end:\n";
  for (const auto& b : cex.balances) out += "    " + printable(b) + "\n";
  if (!cex.effects.empty()) {
    out += "\n  effects at the end (what the services applied):\n";
    for (const auto& e : cex.effects) out += "    " + printable(effect_line(e)) + "\n";
  }
  out += fmt::format("\n  replay the failing run:   {}\n", cex.replay_command);
  out += fmt::format("  replay this counterexample: {}\n", cex.replay_shrunk_command);
  return out;
}

std::string render_text(const results::MatrixResult& m, const TextOptions& o) {
  std::string out = render_matrix(m, o);
  for (const auto& c : m.cells) {
    for (const auto& v : c.violations) out += "\n" + render_counterexample(c, v, o);
    for (const auto& f : c.failures) out += "\n" + render_failure(c, f, o);
  }
  std::vector<std::string> mismatches;
  for (const auto& c : m.cells) {
    if (c.matched) continue;
    const std::string expected = c.expected.empty() ? "pass" : join(c.expected, "+");
    std::vector<std::string> seen;
    for (const auto& f : c.failures) seen.push_back(f.verdict);
    for (const auto& v : c.observed()) seen.push_back(v);
    const std::string observed = seen.empty() ? "pass" : printable(join(seen, "+"));
    const bool canary = !c.expected.empty();
    mismatches.push_back(fmt::format("  {} × {}: expected {}, observed {}{}", c.handler, c.scenario, expected, observed,
                                     !c.failures.empty()            ? " (the cell failed)"
                                     : canary && c.violations.empty() ? " (a canary is no longer caught)"
                                     : c.expected.empty()           ? " (a regression)"
                                                                    : ""));
  }
  out += "\n";
  if (m.interrupted) out += paint(o, "1;33", "interrupted: the matrix is incomplete") + "\n";
  if (mismatches.empty() && !m.interrupted) {
    out += paint(o, "1;32", fmt::format("matrix matches {} ({} cells)", printable(m.expected_path), m.cells.size())) +
           "\n";
  } else if (!mismatches.empty()) {
    out += paint(o, "1;31", fmt::format("{} cell{} differ from {}:", mismatches.size(),
                                        mismatches.size() == 1 ? "" : "s", printable(m.expected_path))) + "\n";
    out += join(mismatches, "\n") + "\n";
  }
  return out;
}

}  // namespace twice::reports
