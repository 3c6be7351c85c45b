#include "html_report.h"

#include <map>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "cell_verdict.h"
#include "escape.h"
#include "html_svg.h"
#include "statistics.h"
#include "timeline.h"

namespace twice::reports {
namespace {

constexpr const char* kStyle = R"css(
:root { --fg: #202124; --muted: #5f6368; --line: #dadce0; --ok: #137333; --ok-bg: #e6f4ea; --warn: #b06000;
  --warn-bg: #fef7e0; --bad: #c5221f; --bad-bg: #fce8e6; --idle-bg: #f1f3f4; --link: #1967d2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: #fff; }
main { max-width: 1400px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; } h1 small { font-weight: 400; color: var(--muted); font-size: 18px; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 8px; } article h3 { margin-top: 0; }
a { color: var(--link); text-decoration: none; } a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: 12.5px; }
.muted { color: var(--muted); }
nav { margin: 8px 0 0; } nav a { margin-right: 16px; }
.banner { margin: 16px 0 8px; padding: 12px 16px; border-radius: 8px; font-weight: 600; }
.banner.ok { background: var(--ok-bg); color: var(--ok); }
.banner.bad { background: var(--bad-bg); color: var(--bad); }
.banner.warn { background: var(--warn-bg); color: var(--warn); }
.banner ul { margin: 6px 0 0; font-weight: 400; }
table { border-collapse: collapse; }
table.matrix th, table.matrix td { border: 1px solid #fff; padding: 8px 12px; text-align: left; vertical-align: top; }
table.matrix thead th { background: #f8f9fa; font-weight: 600; border-bottom: 2px solid var(--line); }
table.matrix tbody th { background: #f8f9fa; font-family: ui-monospace, "DejaVu Sans Mono", monospace;
  font-weight: 600; font-size: 13px; white-space: nowrap; }
td.cell { min-width: 190px; border-radius: 4px; }
.matrix-box { max-height: 80vh; overflow: auto; padding: 0; }
table.matrix thead th { position: sticky; top: 0; z-index: 1; }
table.matrix tbody th, table.matrix thead th:first-child { position: sticky; left: 0; z-index: 2;
  box-shadow: 1px 0 0 var(--line); }
td.cell small { display: block; font-weight: 400; opacity: .85; }
td.pass { background: var(--ok-bg); color: var(--ok); }
td.caught { background: var(--warn-bg); color: var(--warn); }
td.differs { background: var(--bad-bg); color: var(--bad); font-weight: 600; box-shadow: inset 0 0 0 2px var(--bad); }
td.notrun { background: var(--idle-bg); color: var(--muted); }
td.cell a { color: inherit; }
.legend { margin: 10px 0; color: var(--muted); font-size: 13px; }
.legend span.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin: 0 4px -1px 12px; }
.swatch.pass { background: var(--ok-bg); border: 1px solid var(--ok); }
.swatch.caught { background: var(--warn-bg); border: 1px solid var(--warn); }
.swatch.differs { background: var(--bad-bg); border: 1px solid var(--bad); }
.swatch.notrun { background: var(--idle-bg); border: 1px solid var(--muted); }
table.stats th, table.stats td { padding: 5px 10px; border-bottom: 1px solid #eee; text-align: right;
  white-space: nowrap; }
table.stats th { background: #f8f9fa; font-weight: 600; }
table.stats td.name, table.stats th.name { text-align: left; }
table.stats tr.differs td { color: var(--bad); font-weight: 600; }
table.stats tr:hover td { background: #f8f9fa; }
table.stats svg { vertical-align: middle; margin-right: 6px; }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; padding: 8px; background: #fff; }
svg text { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12px; fill: var(--fg); }
svg text.lane-title { font-weight: 700; font-size: 12.5px; }
svg text.time, svg text.tick, svg text.axis-label { fill: var(--muted); font-size: 11px; }
svg text.step-no { font-weight: 700; }
svg text.bar-label { text-anchor: end; }
svg g.step:hover rect { stroke-width: 2.5; }
article.cx { margin: 28px 0; padding: 16px 20px; border: 1px solid var(--line); border-radius: 10px; }
article.cx.differs { border-color: var(--bad); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  margin-right: 6px; vertical-align: 1px; }
.badge.caught { background: var(--warn-bg); color: var(--warn); }
.badge.differs { background: var(--bad-bg); color: var(--bad); }
blockquote { margin: 6px 0 10px; padding: 4px 12px; border-left: 4px solid var(--warn); background: #fffdf5; }
article.differs blockquote { border-color: var(--bad); background: #fff8f7; }
.kinds { margin: 6px 0 10px; font-size: 12px; color: var(--muted); }
.kinds i { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin: 0 4px -1px 10px;
  border-width: 1px; border-style: solid; }
.k-read { background: #eef4fe; border-color: #8ab4f8; } .k-write { background: #d2e3fc; border-color: #1967d2; }
.k-lock { background: #f3e8fd; border-color: #a142f4; } .k-clock { background: #fef7e0; border-color: #f9ab00; }
.k-task { background: #f1f3f4; border-color: #9aa0a6; } .k-fault { background: #fce8e6; border-color: #d93025; }
b.bad { color: var(--bad); }
details { margin: 10px 0; } summary { cursor: pointer; color: var(--link); }
table.transcript { width: 100%; table-layout: fixed; margin-top: 8px; }
table.transcript th, table.transcript td { border: 1px solid #eee; padding: 4px 8px; vertical-align: top;
  text-align: left; overflow-wrap: anywhere; }
table.transcript th { background: #f8f9fa; }
table.transcript col.step { width: 48px; } table.transcript col.time { width: 80px; }
table.transcript .result { color: var(--muted); }
ul.plain { margin: 4px 0; padding-left: 20px; } li.wrong { color: var(--bad); font-weight: 600; }
.replay { display: flex; align-items: center; gap: 8px; margin: 4px 0; }
.replay code { background: #f8f9fa; border: 1px solid #eee; border-radius: 4px; padding: 4px 8px;
  overflow-x: auto; white-space: pre; flex: 1; }
button.copy { font: inherit; font-size: 12px; padding: 3px 10px; border: 1px solid var(--line); border-radius: 4px;
  background: #fff; cursor: pointer; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
)css";

constexpr const char* kScript = R"js(
document.querySelectorAll('button.copy').forEach(function (button) {
  button.addEventListener('click', function () {
    var text = button.getAttribute('data-text');
    if (!navigator.clipboard || !navigator.clipboard.writeText) return;
    navigator.clipboard.writeText(text).then(function () {
      button.textContent = 'Copied';
      setTimeout(function () { button.textContent = 'Copy'; }, 1200);
    }, function () {});
  });
});
document.documentElement.setAttribute('data-ready', '1');
)js";

// 'sha256-…' for a Content-Security-Policy source list.
std::string csp_hash(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  unsigned char base64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(base64, digest, static_cast<int>(length));
  return fmt::format("'sha256-{}'", std::string(reinterpret_cast<const char*>(base64), static_cast<std::size_t>(n)));
}

std::string esc(std::string_view s) { return html_escape(s); }

const char* css_class(CellVerdict v) {
  switch (v) {
    case CellVerdict::kPass: return "pass";
    case CellVerdict::kCaught: return "caught";
    case CellVerdict::kNotRun: return "notrun";
    default: return "differs";
  }
}

// Anchor of each cell's first counterexample, numbered in report order.
// The cells whose counterexamples are shown, in the order shown: those that
// differ from the expected matrix first (what a red run is read for), then
// the known bugs caught as expected, each group in matrix order.
std::vector<const results::CellResult*> counterexample_order(const results::MatrixResult& m) {
  std::vector<const results::CellResult*> out;
  for (const bool differing : {true, false})
    for (const auto& c : m.cells)
      if (!c.violations.empty() && differs(verdict_of(&c)) == differing) out.push_back(&c);
  return out;
}

// Each cell's first counterexample's id (cx-<id>), in counterexample_order.
std::map<const results::CellResult*, int> anchors(const results::MatrixResult& m) {
  std::map<const results::CellResult*, int> out;
  int next = 0;
  for (const auto* c : counterexample_order(m)) {
    out[c] = next;
    next += static_cast<int>(c->violations.size());
  }
  return out;
}

// Under the exhaustive strategy, what a passing cell's search amounts to: a
// proof within its bounds, or a search cut short that proved nothing. Empty
// for other strategies.
std::string search_note(const results::CellResult& c) {
  if (!c.exhaustive) return {};
  if (c.exhaustive->interrupted) return "<small>interrupted: nothing proved</small>";
  if (!c.exhaustive->complete) return "<small>budget ran out: nothing proved</small>";
  return "<small>proved</small>";
}

std::string matrix_table(const results::MatrixResult& m) {
  const auto anchor = anchors(m);
  // In its own scroll box, the handler column stuck to its left edge: an
  // 18-scenario matrix is wider than any screen.
  std::string out = "<div class=\"scroll matrix-box\"><table class=\"matrix\"><thead><tr><th>handler</th>";
  for (const auto& s : m.scenarios) out += "<th>" + esc(s) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& h : m.handlers) {
    out += "<tr><th>" + esc(h) + "</th>";
    for (const auto& s : m.scenarios) {
      const results::CellResult* c = m.cell(h, s);
      const CellVerdict v = verdict_of(c);
      std::string body;
      if (v == CellVerdict::kNotRun) body = "not run";
      else if (v == CellVerdict::kPass)
        body = fmt::format("pass<small>0/{}</small>{}", c->seeds_run, search_note(*c));
      else {
        body = differs(v) ? fmt::format("✗ {}", verdict_name(v)) : "";
        for (const auto& vr : c->violations)
          body += fmt::format("{}{} <small>{} {}/{}</small>", body.empty() ? "" : "<br>", esc(vr.invariant),
                              differs(v) ? "in" : "caught", vr.failures, c->seeds_run);
        if (v == CellVerdict::kCanaryLost) body += fmt::format("<small>0/{}</small>", c->seeds_run);
        if (differs(v)) body += "<small>expected: " + esc(expected_summary(*c)) + "</small>";
        if (auto it = anchor.find(c); it != anchor.end()) body = fmt::format("<a href=\"#cx-{}\">{}</a>", it->second, body);
      }
      // A handler that left processes running (a daemon): said in its cell, whatever the verdict.
      if (c && v != CellVerdict::kNotRun)
        if (const std::string left = processes_left_sentence(c->processes_left, "cell"); !left.empty())
          body += "<small>" + esc(left) + "</small>";
      const std::string title = c && !c->expected_reason.empty() ? " title=\"" + esc(c->expected_reason) + "\"" : "";
      out += fmt::format("<td class=\"cell {}\"{}>{}</td>", css_class(v), title, body);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n<p class=\"legend\"><span class=\"swatch pass\"></span>pass: no violation, none expected"
         "<span class=\"swatch caught\"></span>caught k/n: a known-buggy handler caught in k of n " +
         std::string(is_exhaustive(m) ? "schedules" : "runs") + ", as expected"
         "<span class=\"swatch differs\"></span>differs from " +
         compared_with(m, esc(m.expected_path)) + "<span class=\"swatch notrun\"></span>not run</p>\n";
  return out;
}

std::string statistics_table(const results::MatrixResult& m) {
  bool any_pct = false;
  for (const auto& c : m.cells) any_pct |= pct_depth(c.strategy).has_value();
  std::string out = "<div class=\"scroll\"><table class=\"stats\"><thead><tr><th class=\"name\">handler</th>"
                    "<th class=\"name\">scenario</th><th class=\"name\">strategy</th><th>failing runs</th>"
                    "<th>failure rate</th><th>95% Wilson interval</th><th></th><th>first failure</th>"
                    "<th>median schedules to failure</th>";
  if (any_pct) out += "<th>PCT bound 1/(n·k<sup>d−1</sup>)</th>";
  out += "</tr></thead><tbody>\n";
  bool any_enumerated = false;
  for (const auto& c : m.cells) {
    const CellStatistics s = cell_statistics(c);
    any_enumerated |= s.enumerated;
    // An exhaustive search's schedules are no sample: no interval, no typical gap.
    out += fmt::format("<tr class=\"{}\"><td class=\"name mono\">{}</td><td class=\"name mono\">{}</td>"
                       "<td class=\"name mono\">{}</td><td>{}/{}</td><td>{}</td><td class=\"muted\">{}</td>"
                       "<td class=\"name\">{}</td><td>{}</td><td>{}</td>",
                       css_class(verdict_of(&c)), esc(c.handler), esc(c.scenario), esc(c.strategy), s.failures, s.runs,
                       format_percent(s.failure_rate),
                       s.enumerated ? std::string("—")
                                    : fmt::format("{} – {}", format_percent(s.wilson95.low), format_percent(s.wilson95.high)),
                       s.enumerated ? std::string() : svg_rate_interval(c),
                       s.first_failure ? std::to_string(*s.first_failure) : "—",
                       s.median_schedules && !s.enumerated ? fmt::format("{:g}", *s.median_schedules) : "—");
    if (any_pct)
      out += s.pct_lower_bound ? fmt::format("<td>≥ {} <span class=\"muted\">(n={}, k={}, d={})</span></td>",
                                             format_percent(*s.pct_lower_bound), c.max_tasks, c.max_steps, *s.pct_depth)
                               : "<td>—</td>";
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n<p class=\"legend\">Schedules to failure are the gaps between consecutive failing "
         "runs (the first gap is the index of the first one); their median estimates how many schedules a search "
         "spends per failure. The bar shows the 95% Wilson interval of the failure rate, the dot the observed rate";
  out += any_pct ? ", the purple tick PCT's guaranteed per-run probability of finding a bug of depth d." : ".";
  if (any_enumerated)
    out += " An exhaustive search's runs are the schedules it enumerated, depth first, not a random sample: its rate "
           "counts those schedules and estimates no probability, so it has no interval and no median (—); the "
           "Exhaustive search section says what it proved.";
  out += "</p>\n";
  return out;
}

std::string transcript_table(const results::Counterexample& cex) {
  std::string out = "<table class=\"transcript\"><colgroup><col class=\"step\"><col class=\"time\">";
  for (std::size_t i = 0; i < cex.columns.size(); ++i) out += "<col>";
  out += "</colgroup><thead><tr><th>step</th><th>time</th>";
  for (const auto& col : cex.columns) out += "<th>" + esc(col) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& e : build_timeline(cex)) {
    if (e.column < 0) continue;
    out += fmt::format("<tr><td>{}</td><td class=\"mono\">{}</td>", e.step > 0 ? std::to_string(e.step) : "",
                       esc(e.time));
    for (std::size_t i = 0; i < cex.columns.size(); ++i) {
      if (static_cast<int>(i) != e.column) {
        out += "<td></td>";
        continue;
      }
      const bool code = e.kind == "sql" || e.kind == "lock";
      out += "<td>" + (code ? "<code>" + esc(e.text) + "</code>" : "<em>" + esc(e.text) + "</em>");
      if (!e.result.empty()) out += " <span class=\"result\">→ " + esc(e.result) + "</span>";
      out += "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string replay_line(const char* what, const std::string& command) {
  return fmt::format("<div class=\"replay\"><span class=\"muted\">{}</span><code>{}</code>"
                     "<button class=\"copy\" type=\"button\" data-text=\"{}\">Copy</button></div>\n",
                     what, esc(command), esc(command));
}

std::string counterexample_article(const results::CellResult& c, const results::ViolationResult& v, int id) {
  const auto& cex = v.counterexample;
  const CellVerdict verdict = verdict_of(&c);
  std::string out = fmt::format("<article class=\"cx {}\" id=\"cx-{}\">\n", differs(verdict) ? "differs" : "", id);
  out += fmt::format("<h3><span class=\"badge {}\">{}</span><span class=\"mono\">{} × {}</span>: {}</h3>\n",
                     css_class(verdict), differs(verdict) ? verdict_name(verdict) : "known bug caught", esc(c.handler),
                     esc(c.scenario), esc(v.invariant));
  out += "<blockquote>" + esc(v.detail) + "</blockquote>\n";
  if (cex.preemptions >= 0)  // the exhaustive search's: no seed, a schedule
    out += fmt::format("<p>First seen in schedule <b>{}</b>; <b>{} of {}</b> schedules showed it. The failing schedule "
                       "with the fewest preemptions has <b>{}</b>. {}.",
                       v.schedules_to_first, v.failures, c.seeds_run, cex.preemptions, esc(length_sentence(cex)));
  else
    out += fmt::format("<p>First seen after <b>{}</b> schedule{} (seed <code>{}</code>); <b>{} of {}</b> runs showed "
                       "it. {}.",
                       v.schedules_to_first, v.schedules_to_first == 1 ? "" : "s", v.seed, v.failures, c.seeds_run,
                       esc(length_sentence(cex)));
  if (differs(verdict)) out += " <b class=\"bad\">This cell differs: " + esc(mismatch_sentence(c)) + ".</b>";
  else if (!c.expected_reason.empty()) out += " Expected: " + esc(c.expected_reason) + ".";
  out += "</p>\n<div class=\"scroll\">" + svg_swimlanes(cex) + "</div>\n";
  out += "<p class=\"kinds\">Hover a box for its full statement.<i class=\"k-read\"></i>read<i class=\"k-write\"></i>"
         "write<i class=\"k-lock\"></i>lock<i class=\"k-clock\"></i>clock<i class=\"k-task\"></i>task / gateway"
         "<i class=\"k-fault\"></i>fault</p>\n";
  out += "<details><summary>Full transcript</summary>\n" + transcript_table(cex) + "</details>\n";
  if (!cex.gateway.empty()) {
    out += "<details><summary>Gateway meanwhile</summary><ul class=\"plain mono\">";
    for (const auto& g : cex.gateway) out += "<li>" + esc(g) + "</li>";
    out += "</ul></details>\n";
  }
  if (!cex.balances.empty()) {
    out += "<p><b>Balances at the end</b></p><ul class=\"plain mono\">";
    for (const auto& b : cex.balances)
      out += fmt::format("<li{}>{}</li>", b.find("<-- wrong") != std::string::npos ? " class=\"wrong\"" : "", esc(b));
    out += "</ul>\n";
  }
  if (!cex.effects.empty()) {
    out += "<p><b>Effects at the end</b> (what the services applied)</p><ul class=\"plain mono\">";
    for (const auto& e : cex.effects) {
      const std::string line = effect_line(e);
      out += fmt::format("<li{}>{}</li>", line.find("<-- wrong") != std::string::npos ? " class=\"wrong\"" : "",
                         esc(line));
    }
    out += "</ul>\n";
  }
  out += replay_line("the failing run", cex.replay_command);
  out += replay_line("this counterexample", cex.replay_shrunk_command);
  return out + "</article>\n";
}

}  // namespace

std::string render_html(const results::MatrixResult& m) {
  int differing = 0, caught = 0, run = 0, examples = 0;
  for (const auto& h : m.handlers)
    for (const auto& s : m.scenarios) {
      const CellVerdict v = verdict_of(m.cell(h, s));
      differing += differs(v);
      caught += v == CellVerdict::kCaught;
      run += v != CellVerdict::kNotRun;
    }
  for (const auto& c : m.cells) examples += static_cast<int>(c.violations.size());
  const std::size_t total = m.handlers.size() * m.scenarios.size();

  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {}; "
                     "script-src {}; img-src data:; base-uri 'none'; form-action 'none'\">\n",
                     csp_hash(kStyle), csp_hash(kScript));
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>twice report: {}</title>\n",
                     differing       ? fmt::format("{} cell{} differ{}", differing, differing == 1 ? "" : "s",
                                                   differing == 1 ? "s" : "")
                     : m.interrupted ? std::string("interrupted")
                                     : std::string("matrix matches"));
  out += fmt::format("<style>{}</style>\n</head><body><main>\n", kStyle);
  out += "<header><h1>twice <small>payment-callback matrix</small></h1>\n";
  if (is_exhaustive(m))  // no seeds: every schedule within the bounds
    out += fmt::format("<p class=\"muted\">strategy <code>{}</code> · {} handlers × {} scenarios</p>\n", esc(m.strategy),
                       m.handlers.size(), m.scenarios.size());
  else
    out += fmt::format("<p class=\"muted\">{} seeds per cell · strategy <code>{}</code> · base seed <code>{}</code> · {} "
                       "handlers × {} scenarios</p>\n",
                       m.seeds, esc(m.strategy), m.base_seed, m.handlers.size(), m.scenarios.size());
  for (const auto& server : m.servers)
    out += "<p class=\"muted\">ran on the " +
           server_sentence(server, [&](std::string_view s) { return "<code>" + esc(s) + "</code>"; }) + "</p>\n";
  if (m.interrupted)
    out += fmt::format("<div class=\"banner warn\">Interrupted: {} of {} cells ran{}; the matrix is incomplete.</div>\n",
                       run, total, cut_short_clause(m));
  // An interrupted run matches nothing: the cells it did not run are unknown.
  if (differing == 0 && m.interrupted) {
    out += fmt::format("<p>No cell that ran differs from {}: {} cell{}, {} pass, {} known bug{} caught as "
                       "expected.</p>\n",
                       compared_with(m, esc(m.expected_path)), run, run == 1 ? "" : "s", run - caught, caught,
                       caught == 1 ? "" : "s");
  } else if (differing == 0) {
    out += fmt::format("<div class=\"banner ok\">✓ The matrix matches {}: {} cell{}, {} pass, {} "
                       "known bug{} caught as expected.</div>\n",
                       compared_with(m, esc(m.expected_path)), run, run == 1 ? "" : "s", run - caught, caught,
                       caught == 1 ? "" : "s");
  } else {
    out += fmt::format("<div class=\"banner bad\">✗ {} of {} cells differ from {}<ul>", differing, total,
                       compared_with(m, esc(m.expected_path)));
    const auto anchor = anchors(m);
    // Each with a link to the counterexample that made it differ and the
    // command that replays it, as the Markdown banner gives them.
    for (const auto& c : m.cells) {
      if (!differs(verdict_of(&c))) continue;
      const auto it = anchor.find(&c);
      const results::ViolationResult* v = headline_violation(c);
      std::string link;
      if (it != anchor.end() && v)
        link = fmt::format(" (<a href=\"#cx-{}\">counterexample</a>)", it->second + (v - c.violations.data())) +
               replay_line("replay it", v->counterexample.replay_shrunk_command);
      out += fmt::format("<li><span class=\"mono\">{} × {}</span>: {}{}</li>", esc(c.handler), esc(c.scenario),
                         esc(mismatch_sentence(c)), link);
    }
    out += "</ul><p>" + intended_difference_hint(m, "<code>" + esc(m.expected_path) + "</code>") + "</p></div>\n";
  }
  for (const auto& [what, to_do] : unseen_bug_caveats(m))
    out += fmt::format("<p class=\"muted\">Note: {}: {}.</p>\n", esc(what), esc(to_do));
  // Only under the exhaustive strategy: what each cell's search proved.
  std::string proofs;
  for (const auto& c : m.cells)
    if (const std::string proof = exhaustive_sentence(c); !proof.empty())
      proofs += fmt::format("<li><span class=\"mono\">{} × {}</span>: {}</li>\n", esc(c.handler), esc(c.scenario),
                            esc(proof));
  out += fmt::format("<nav><a href=\"#matrix\">Matrix</a>{}<a href=\"#statistics\">Statistics</a>"
                     "<a href=\"#counterexamples\">Counterexamples ({})</a></nav></header>\n",
                     proofs.empty() ? "" : "<a href=\"#exhaustive\">Exhaustive search</a>", examples);
  out += "<section id=\"matrix\"><h2>Matrix</h2>\n" + matrix_table(m) + "</section>\n";
  if (!proofs.empty())
    out += "<section id=\"exhaustive\"><h2>Exhaustive search</h2>\n<ul class=\"plain\">\n" + proofs + "</ul></section>\n";
  out += "<section id=\"statistics\"><h2>Statistics</h2>\n<h3>Schedules to first failure</h3>\n";
  out += "<p class=\"legend\">Bar: the run that first showed a violation; ◆: the median gap between failing runs. "
         "Log scale.</p>\n<div class=\"scroll\">" + svg_schedules_chart(m) + "</div>\n";
  out += "<h3>Per cell</h3>\n" + statistics_table(m) + "</section>\n";
  out += "<section id=\"counterexamples\"><h2>Counterexamples</h2>\n";
  if (examples == 0) out += "<p class=\"muted\">No run showed a violation.</p>\n";
  int id = 0;
  for (const auto* c : counterexample_order(m))
    for (const auto& v : c->violations) out += counterexample_article(*c, v, id++);
  out += fmt::format("</section>\n<footer>Written by twice from the result of one matrix run; the same run with the "
                     "same {} writes the same report.</footer>\n</main>\n",
                     is_exhaustive(m) ? "bounds" : "seeds");
  out += fmt::format("<script>{}</script>\n</body></html>\n", kScript);
  return out;
}

}  // namespace twice::reports
