#include "markdown_report.h"

#include <fmt/format.h>

#include "cell_verdict.h"
#include "escape.h"
#include "statistics.h"
#include "timeline.h"

namespace twice::reports {
namespace {

// GitHub refuses a job summary over 1 MiB; stop adding counterexamples well before.
constexpr std::size_t kSummaryBudget = 900 * 1024;
// Diagram arrows stay readable; the transcript table below has the full text.
constexpr std::size_t kMermaidTextChars = 72;

const char* verdict_mark(CellVerdict v) {
  switch (v) {
    case CellVerdict::kPass: return "✅";
    case CellVerdict::kCaught: return "🐞";
    case CellVerdict::kNotRun: return "⏸️";
    default: return "❌";
  }
}

std::string matrix_cell(const results::CellResult* c) {
  const CellVerdict v = verdict_of(c);
  if (v == CellVerdict::kNotRun) return fmt::format("{} not run", verdict_mark(v));
  if (v == CellVerdict::kPass) return fmt::format("{} pass", verdict_mark(v));
  std::string caught;
  for (const auto& vr : c->violations) {
    if (!caught.empty()) caught += "<br>";
    caught += fmt::format("{} caught {}/{}", markdown_text(vr.invariant), vr.failures, c->seeds_run);
  }
  if (v == CellVerdict::kCaught) return fmt::format("{} {}", verdict_mark(v), caught);
  const std::string observed = v == CellVerdict::kNotProved ? proof_shortfall(*c)
                               : c->violations.empty() && v != CellVerdict::kFailed
                                   ? fmt::format("pass in {} {}", c->seeds_run, runs_noun(*c))
                                   : observed_summary(*c);
  return fmt::format("{} **{}**: {} (expected {})", verdict_mark(v), verdict_name(v), markdown_text(observed),
                     markdown_text(expected_summary(*c)));
}

std::string mermaid_line(const char* from, const char* arrow, const char* to, const std::string& text) {
  return fmt::format("    {}{}{}: {}\n", from, arrow, to, mermaid_text(truncate_utf8(text, kMermaidTextChars)));
}

// A statement cut to fit an arrow keeps its WHERE clause, when that is
// short enough: which rows it picks is often what the story turns on
// ("... WHERE order_no = 'O-1' AND status <> 'CLOSED'").
std::string diagram_sql(const std::string& text) {
  if (truncate_utf8(text, kMermaidTextChars) == text) return text;
  std::size_t where = text.find(" WHERE ");
  if (where == std::string::npos) where = text.find(" where ");
  constexpr std::size_t kLeastHead = 16;  // "3. UPDATE orders…"
  if (where == std::string::npos) return text;
  const std::string clause = text.substr(where);  // " WHERE ..."
  const std::size_t head = kMermaidTextChars > kLeastHead ? kMermaidTextChars - kLeastHead : 0;
  if (truncate_utf8(clause, head) != clause) return text;  // too long itself: cut at the end as usual
  std::size_t clause_chars = 0;
  for (unsigned char ch : clause) clause_chars += (ch & 0xC0) != 0x80;
  return truncate_utf8(text.substr(0, where), kMermaidTextChars - clause_chars) + clause;
}

std::string step_prefix(int step) { return step > 0 ? fmt::format("{}. ", step) : ""; }

std::string transcript_cell(const TimelineEntry& e) {
  std::string out;
  if (e.kind == "sql" || e.kind == "lock") out = markdown_cell_code(e.text);
  else if (e.kind == "task") out = "<em>" + markdown_text(e.text) + "</em>";
  else out = markdown_text(e.text);
  if (!e.result.empty()) out += " → " + markdown_text(e.result);
  return out;
}

}  // namespace

std::string render_markdown_matrix(const results::MatrixResult& m) {
  std::string out = "| handler |";
  for (const auto& s : m.scenarios) out += " " + markdown_text(s) + " |";
  out += "\n| --- |";
  for (std::size_t j = 0; j < m.scenarios.size(); ++j) out += " --- |";
  out += "\n";
  for (const auto& h : m.handlers) {
    out += "| **" + markdown_text(h) + "** |";
    for (const auto& s : m.scenarios) out += " " + matrix_cell(m.cell(h, s)) + " |";
    out += "\n";
  }
  out += fmt::format("\n✅ pass: no violation, none expected · 🐞 caught k/n: a known-buggy handler caught in k of n {}, "
                     "as expected · ❌ differs from ",
                     is_exhaustive(m) ? "schedules" : "runs") +
         compared_with(m, markdown_code_span(m.expected_path)) + "\n";
  return out;
}

std::string render_markdown_statistics(const results::MatrixResult& m) {
  bool any_pct = false;
  for (const auto& c : m.cells) any_pct |= pct_depth(c.strategy).has_value();
  std::string out = "| handler | scenario | strategy | failing runs | failure rate | 95% Wilson interval | "
                    "first failure | median schedules to failure |";
  out += any_pct ? " PCT bound 1/(n·k^(d−1)) |\n" : "\n";
  out += "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |";
  out += any_pct ? " ---: |\n" : "\n";
  bool any_enumerated = false;
  for (const auto& c : m.cells) {
    const CellStatistics s = cell_statistics(c);
    any_enumerated |= s.enumerated;
    // An exhaustive search's schedules are no sample: no interval, no typical gap.
    out += fmt::format("| {} | {} | {} | {}/{} | {} | {} | {} | {} |", markdown_text(c.handler),
                       markdown_text(c.scenario), markdown_text(c.strategy), s.failures, s.runs,
                       format_percent(s.failure_rate),
                       s.enumerated ? std::string("—")
                                    : fmt::format("{} – {}", format_percent(s.wilson95.low), format_percent(s.wilson95.high)),
                       s.first_failure ? std::to_string(*s.first_failure) : "—",
                       s.median_schedules && !s.enumerated ? fmt::format("{:g}", *s.median_schedules) : "—");
    if (any_pct) {
      out += s.pct_lower_bound ? fmt::format(" ≥ {} (n={}, k={}, d={}) |", format_percent(*s.pct_lower_bound),
                                             c.max_tasks, c.max_steps, *s.pct_depth)
                               : " — |";
    }
    out += "\n";
  }
  out += "\nSchedules to failure: the gaps between consecutive failing runs (the first gap is the index of the first "
         "one); their median estimates how many schedules a search needs per failure.";
  if (any_pct) out += " The PCT bound is the guaranteed per-run probability of finding a bug of depth d.";
  if (any_enumerated)
    out += " An exhaustive search's runs are the schedules it enumerated, depth first, not a random sample: its rate "
           "counts those schedules and estimates no probability, so it has no interval and no median (—); the "
           "Exhaustive search section says what it proved.";
  out += "\n";
  return out;
}

// The column of the service a "call <service> ..." line calls, or -1.
static int service_lane(const results::Counterexample& cex, const TimelineEntry& e) {
  if (e.kind != "call" || !e.text.starts_with("call ")) return -1;
  const std::string_view rest = std::string_view(e.text).substr(5);
  const std::string lane = std::string(rest.substr(0, rest.find(' '))) + " (service)";
  for (std::size_t i = 0; i < cex.columns.size(); ++i)
    if (cex.columns[i] == lane) return static_cast<int>(i);
  return -1;
}

std::string render_mermaid_sequence(const results::Counterexample& cex) {
  const auto timeline = build_timeline(cex);
  bool uses_locks = false;
  for (const auto& e : timeline) uses_locks |= e.kind == "lock";

  std::vector<std::string> ids;
  for (std::size_t i = 0; i < cex.columns.size(); ++i) ids.push_back(fmt::format("t{}", i + 1));
  std::string out = "```mermaid\nsequenceDiagram\n    participant gw as Gateway\n";
  for (std::size_t i = 0; i < cex.columns.size(); ++i)
    out += fmt::format("    participant {} as {}\n", ids[i], mermaid_text(truncate_utf8(cex.columns[i], 48)));
  out += "    participant db as DB\n";
  if (uses_locks) out += "    participant locks as Lock service\n";

  for (const auto& e : timeline) {
    if (e.column < 0) {
      out += mermaid_line("Note over ", "", "gw", (e.kind == "fault" ? "fault: " : "") + e.text);
      continue;
    }
    const char* task = ids[static_cast<std::size_t>(e.column)].c_str();
    const std::string text = step_prefix(e.step) + e.text;
    if (e.kind == "sql" || e.kind == "lock") {
      const char* target = e.kind == "sql" ? "db" : "locks";
      out += mermaid_line(task, "->>", target, e.kind == "sql" ? diagram_sql(text) : text);
      if (!e.result.empty()) out += mermaid_line(target, "-->>", task, e.result);
    } else if (const int service = service_lane(cex, e); service >= 0) {
      // "call warehouse ship O-1": an arrow to the service's own lane, its answer back.
      const char* lane = ids[static_cast<std::size_t>(service)].c_str();
      out += mermaid_line(task, "->>", lane, text);
      if (!e.result.empty()) out += mermaid_line(lane, "-->>", task, e.result);
    } else if (e.kind == "task" && e.text.starts_with("starts")) {
      out += mermaid_line("gw", "->>", task, text);
    } else if (e.kind == "task" && (e.text.starts_with("replies") || e.text.starts_with("responds"))) {
      out += mermaid_line(task, "-->>", "gw", text);
    } else {
      out += mermaid_line("Note over ", "", task, text + (e.result.empty() ? "" : " → " + e.result));
    }
  }
  return out + "```\n";
}

std::string render_markdown_transcript(const results::Counterexample& cex) {
  std::string out = "| step | time |";
  for (const auto& col : cex.columns) out += " " + markdown_text(col) + " |";
  out += "\n| ---: | ---: |";
  for (std::size_t i = 0; i < cex.columns.size(); ++i) out += " --- |";
  out += "\n";
  for (const auto& e : build_timeline(cex)) {
    if (e.column < 0) continue;  // the gateway's lines are listed below the table
    out += fmt::format("| {} | {} |", e.step > 0 ? std::to_string(e.step) : "", markdown_text(e.time));
    for (std::size_t i = 0; i < cex.columns.size(); ++i)
      out += static_cast<int>(i) == e.column ? " " + transcript_cell(e) + " |" : " |";
    out += "\n";
  }
  return out;
}

namespace {
// The anchor the banner links to: the n-th counterexample of a differing cell.
std::string differing_anchor(int n) { return fmt::format("twice-differs-{}", n); }
}  // namespace

std::string render_markdown_counterexample(const results::CellResult& cell, const results::ViolationResult& v,
                                           const std::string& compared) {
  const auto& cex = v.counterexample;
  const CellVerdict verdict = verdict_of(&cell);
  std::string out = fmt::format("#### {} {} × {}: {}\n\n", verdict_mark(verdict), markdown_text(cell.handler),
                                markdown_text(cell.scenario), markdown_text(v.invariant));
  out += "> " + markdown_text(v.detail) + "\n\n";
  if (cex.preemptions >= 0) {  // the exhaustive search's: no seed, a schedule
    out += fmt::format("First seen in schedule **{}**; **{} of {}** schedules showed it. ", v.schedules_to_first,
                       v.failures, cell.seeds_run);
    out += fmt::format("The failing schedule with the fewest preemptions has **{}**. ", cex.preemptions);
  } else {
    out += fmt::format("First seen after **{}** schedule{} (seed {}); **{} of {}** runs showed it. ",
                       v.schedules_to_first, v.schedules_to_first == 1 ? "" : "s",
                       markdown_code_span(std::to_string(v.seed)), v.failures, cell.seeds_run);
  }
  out += length_sentence(cex) + ".\n";
  if (differs(verdict)) {
    out += fmt::format("\n❌ This cell differs from {}: {}.\n", compared,
                       markdown_text(mismatch_sentence(cell)));
  } else if (!cell.expected_reason.empty()) {
    out += "\nExpected: " + markdown_text(cell.expected_reason) + "\n";
  }
  out += "\n" + render_mermaid_sequence(cex) + "\n" + render_markdown_transcript(cex);
  if (!cex.gateway.empty()) {
    out += "\n**Gateway meanwhile**\n\n";
    for (const auto& g : cex.gateway) out += "- " + markdown_cell_code(g) + "\n";
  }
  if (!cex.balances.empty()) {
    out += "\n**Balances at the end**\n\n";
    for (const auto& b : cex.balances) out += "- " + markdown_text(b) + "\n";
  }
  if (!cex.effects.empty()) {
    out += "\n**Effects at the end** (what the services applied)\n\n";
    for (const auto& e : cex.effects) out += "- " + markdown_text(effect_line(e)) + "\n";
  }
  out += "\n**Replay**\n\n";
  out += markdown_code_block("# the failing run\n" + cex.replay_command + "\n# this shrunk counterexample\n" +
                                 cex.replay_shrunk_command,
                             "sh");
  return out;
}

std::string render_markdown(const results::MatrixResult& m) {
  int differing = 0;
  int caught = 0;
  int run = 0;
  for (const auto& h : m.handlers)
    for (const auto& s : m.scenarios) {
      const CellVerdict v = verdict_of(m.cell(h, s));
      differing += differs(v);
      caught += v == CellVerdict::kCaught;
      run += v != CellVerdict::kNotRun;
    }
  const std::size_t total = m.handlers.size() * m.scenarios.size();

  std::string out = "## twice: payment-callback matrix\n\n";
  if (m.interrupted)
    out += fmt::format("⚠️ **Interrupted**: {} of {} cells ran{}; the matrix is incomplete.\n\n", run, total,
                       cut_short_clause(m));
  // An interrupted run matches nothing: the cells it did not run are unknown.
  if (differing == 0 && m.interrupted) {
    out += fmt::format("No cell that ran differs from {}: {} cell{}, {} pass, {} known bug{} caught as expected.\n\n",
                       compared_with(m, markdown_code_span(m.expected_path)), run, run == 1 ? "" : "s", run - caught,
                       caught, caught == 1 ? "" : "s");
  } else if (differing == 0) {
    out += fmt::format("✅ **The matrix matches {}**: {} cell{}, {} pass, {} known bug{} "
                       "caught as expected.\n\n",
                       compared_with(m, markdown_code_span(m.expected_path)), run, run == 1 ? "" : "s", run - caught,
                       caught, caught == 1 ? "" : "s");
  } else {
    out += fmt::format("❌ **{} of {} cell{} differ{} from {}**\n\n", differing, total, total == 1 ? "" : "s",
                       differing == 1 ? "s" : "", compared_with(m, markdown_code_span(m.expected_path)));
    // Each with a link to its counterexample (listed first below) and a replay command.
    int anchor = 0;
    for (const auto& c : m.cells) {
      if (!differs(verdict_of(&c))) continue;
      out += fmt::format("- {} × {}: {}", markdown_text(c.handler), markdown_text(c.scenario),
                         markdown_text(mismatch_sentence(c)));
      if (const results::ViolationResult* v = headline_violation(c)) {
        // The violation that made it differ, and the replay that shows it.
        const int index = static_cast<int>(v - c.violations.data());
        out += fmt::format(" ([counterexample](#{})) · {}", differing_anchor(anchor + 1 + index),
                           markdown_cell_code(v->counterexample.replay_shrunk_command));
        anchor += static_cast<int>(c.violations.size());
      }  // a cell that did not finish: its sentence ends with its replay command
      out += "\n";
    }
    out += "\n" + intended_difference_hint(m, markdown_code_span(m.expected_path)) + "\n\n";
  }
  for (const auto& [what, to_do] : unseen_bug_caveats(m))
    out += fmt::format("> **Note**: {}: {}.\n\n", markdown_text(what), markdown_text(to_do));
  if (is_exhaustive(m))  // no seeds: every schedule within the bounds
    out += fmt::format("Strategy {}\n\n", markdown_code_span(m.strategy));
  else
    out += fmt::format("{} seeds per cell · strategy {} · base seed {}\n\n", m.seeds, markdown_code_span(m.strategy),
                       markdown_code_span(std::to_string(m.base_seed)));
  for (const auto& server : m.servers)
    out += "Ran on the " + server_sentence(server, [](std::string_view s) { return markdown_cell_code(s); }) + "\n\n";
  out += render_markdown_matrix(m);
  // Only under --strategy exhaustive: what was proved, cell by cell.
  std::string proofs;
  for (const auto& c : m.cells)
    if (const std::string proof = exhaustive_sentence(c); !proof.empty())
      proofs += fmt::format("- {} × {}: {}\n", markdown_text(c.handler), markdown_text(c.scenario), markdown_text(proof));
  if (!proofs.empty()) out += "\n### Exhaustive search\n\n" + proofs;
  // Only for cells whose handler left processes running (a daemon): what twice killed.
  std::string left;
  for (const auto& c : m.cells)
    if (const std::string sentence = processes_left_sentence(c.processes_left, "cell"); !sentence.empty())
      left += fmt::format("- {} × {}: {}\n", markdown_text(c.handler), markdown_text(c.scenario), sentence);
  if (!left.empty()) out += "\n### Processes left running\n\n" + left;
  out += "\n### Statistics\n\n<details><summary>Failure rate, 95% Wilson interval and schedules to failure, per "
         "cell</summary>\n\n";
  out += render_markdown_statistics(m) + "\n</details>\n";

  // The cells that differ first and always, whatever their size: they are
  // what a red run is read for. The known bugs caught as expected fill the
  // rest of the budget.
  const std::string compared = compared_with(m, markdown_code_span(m.expected_path));
  std::string examples;
  int omitted = 0;
  int shortened = 0;
  int anchor = 0;
  for (const auto& c : m.cells) {
    if (!differs(verdict_of(&c))) continue;
    for (const auto& v : c.violations) {
      examples += fmt::format("\n<a id=\"{}\"></a>\n\n", differing_anchor(++anchor));
      std::string one = render_markdown_counterexample(c, v, compared);
      // Past the budget (hundreds of differing cells, a huge payload), a
      // differing cell keeps its anchor, its sentence and its replay, cut to
      // fit; its transcript is in the HTML and JSON reports.
      if (out.size() + examples.size() + one.size() > kSummaryBudget) {
        one = fmt::format("#### {} {} × {}: {}\n\n> {}\n\nReplay: {}\n", verdict_mark(verdict_of(&c)),
                          markdown_text(truncate_utf8(c.handler, 80)), markdown_text(truncate_utf8(c.scenario, 80)),
                          markdown_text(v.invariant), markdown_text(truncate_utf8(v.detail, 300)),
                          markdown_code_span(truncate_utf8(v.counterexample.replay_shrunk_command, 600)));
        ++shortened;
      }
      examples += one;
    }
  }
  for (const auto& c : m.cells) {
    if (differs(verdict_of(&c))) continue;
    for (const auto& v : c.violations) {
      std::string one = render_markdown_counterexample(c, v, compared);
      if (out.size() + examples.size() + one.size() > kSummaryBudget) {
        ++omitted;
        continue;
      }
      examples += "\n" + one;
    }
  }
  if (!examples.empty() || omitted) out += "\n### Counterexamples\n" + examples;
  if (shortened)
    out += fmt::format("\n{} counterexample{} of differing cells {} shown without {} transcript to stay under GitHub's "
                       "summary size limit; the HTML and JSON reports have {} whole.\n",
                       shortened, shortened == 1 ? "" : "s", shortened == 1 ? "is" : "are",
                       shortened == 1 ? "its" : "their", shortened == 1 ? "it" : "them");
  if (omitted)
    out += fmt::format("\n{} more counterexample{} left out to stay under GitHub's summary size limit; the HTML and "
                       "JSON reports have them all.\n",
                       omitted, omitted == 1 ? " is" : "s are");
  return out;
}

}  // namespace twice::reports
