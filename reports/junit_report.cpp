#include "junit_report.h"

#include <fmt/format.h>

#include "cell_verdict.h"
#include "escape.h"
#include "statistics.h"
#include "text_report.h"

namespace twice::reports {
namespace {

std::string attr(std::string_view s) { return xml_escape_attribute(s); }

// What a reader of the CI page needs to act on a violation: the transcript as
// the terminal shows it, the seed and both replay commands.
std::string violations_text(const results::CellResult& c) {
  TextOptions plain;
  std::string out;
  for (const auto& v : c.violations) out += render_counterexample(c, v, plain) + "\n";
  return out;
}

std::string statistics_line(const results::CellResult& c) {
  const CellStatistics s = cell_statistics(c);
  // An exhaustive search's schedules are no sample: what it searched and proved, not a rate's interval.
  if (s.enumerated) return exhaustive_sentence(c);
  std::string out = fmt::format("failure rate {} ({} of {} runs), 95% Wilson interval {} to {}", format_percent(s.failure_rate),
                                s.failures, s.runs, format_percent(s.wilson95.low), format_percent(s.wilson95.high));
  if (s.median_schedules) out += fmt::format("; median schedules to failure {:g}", *s.median_schedules);
  if (s.pct_lower_bound) out += fmt::format("; PCT bound {}", format_percent(*s.pct_lower_bound));
  return out;
}

// Led by the violation the cell is read for: on a differing cell, one the
// expected matrix does not list (the one that made it differ), with the
// replay that shows that one.
std::string failure_message(const results::CellResult& c) {
  const results::ViolationResult* v = headline_violation(c);
  if (!v) return mismatch_sentence(c);
  if (v->counterexample.preemptions >= 0)  // the exhaustive search's: no seed, a schedule
    return fmt::format("{} in {}/{} schedules: {} (first in schedule {}). {}. Replay: {}", v->invariant, v->failures,
                       c.seeds_run, v->detail, v->schedules_to_first, mismatch_sentence(c),
                       v->counterexample.replay_shrunk_command);
  return fmt::format("{} in {}/{} runs: {} (seed {}). {}. Replay: {}", v->invariant, v->failures, c.seeds_run,
                     v->detail, v->seed, mismatch_sentence(c), v->counterexample.replay_shrunk_command);
}

std::string seconds(double s) { return fmt::format("{:.3f}", s); }

std::string testcase(const results::MatrixResult& m, const std::string& handler, const std::string& scenario) {
  const results::CellResult* c = m.cell(handler, scenario);
  const CellVerdict verdict = verdict_of(c);
  // A line of the cell's text when its handler left processes running (a daemon), else nothing.
  std::string left = c ? processes_left_sentence(c->processes_left, "cell") : "";
  if (!left.empty()) left += "\n";
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">\n", attr(handler),
                                attr(scenario), seconds(c ? c->seconds : 0));
  if (verdict == CellVerdict::kNotRun) {
    out += "      <skipped message=\"not run: the matrix run was interrupted\"/>\n";
  } else if (differs(verdict)) {
    std::string body = mismatch_sentence(*c) + "\n" + statistics_line(*c) + "\n";
    if (!c->expected_reason.empty()) body += "expected because: " + c->expected_reason + "\n";
    body += left;
    if (verdict == CellVerdict::kCanaryLost)
      body += fmt::format("\nNo {} of {} showed {}. Either the handler was fixed (update {}) or "
                          "the scenario no longer exercises the bug.\n",
                          c->exhaustive ? "schedule" : "run", c->seeds_run, expected_summary(*c), m.expected_path);
    body += "\n" + violations_text(*c);
    out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", attr(failure_message(*c)),
                       attr(verdict_name(verdict)), xml_cdata(body));
  }
  if (c && verdict == CellVerdict::kCaught) {
    std::string body = fmt::format("known bug caught as expected: {}\n{}\n", observed_summary(*c), statistics_line(*c));
    if (!c->expected_reason.empty()) body += "expected because: " + c->expected_reason + "\n";
    out += "      <system-out>" + xml_cdata(body + left + "\n" + violations_text(*c)) + "</system-out>\n";
  } else if (c && verdict == CellVerdict::kPass) {
    out += "      <system-out>" + xml_cdata(statistics_line(*c) + "\n" + left) + "</system-out>\n";
  }
  return out + "    </testcase>\n";
}

}  // namespace

std::string render_junit(const results::MatrixResult& m) {
  int tests = 0, failures = 0, skipped = 0;
  double total_seconds = 0;
  // A red run is read from the top: suites with a cell that differs from the
  // expected matrix come first, and in them those cells; the rest keep the
  // matrix's order.
  std::string differing_suites, suites;
  for (const auto& h : m.handlers) {
    int suite_failures = 0, suite_skipped = 0;
    double suite_seconds = 0;
    std::string differing_cases, cases;
    for (const auto& s : m.scenarios) {
      const CellVerdict v = verdict_of(m.cell(h, s));
      suite_failures += differs(v);
      suite_skipped += v == CellVerdict::kNotRun;
      if (const results::CellResult* c = m.cell(h, s)) suite_seconds += c->seconds;
      (differs(v) ? differing_cases : cases) += testcase(m, h, s);
    }
    cases = differing_cases + cases;
    std::string& out = suite_failures > 0 ? differing_suites : suites;
    const int suite_tests = static_cast<int>(m.scenarios.size());
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">\n",
        attr(h), suite_tests, suite_failures, suite_skipped, seconds(suite_seconds));
    out += "    <properties>\n";
    out += fmt::format("      <property name=\"strategy\" value=\"{}\"/>\n", attr(m.strategy));
    if (!is_exhaustive(m)) {  // that strategy reads no seed: a schedule replays a run
      out += fmt::format("      <property name=\"seeds\" value=\"{}\"/>\n", m.seeds);
      out += fmt::format("      <property name=\"base_seed\" value=\"{}\"/>\n", m.base_seed);
    }
    out += fmt::format("      <property name=\"expected_path\" value=\"{}\"/>\n", attr(m.expected_path));
    // Only when there was no such file (every cell was expected to pass): a report against one stays as it was.
    if (!m.expected_found) out += "      <property name=\"expected_found\" value=\"false\"/>\n";
    // Which server produced the server engines' verdicts: "server.mariadb" its version, then its settings and URL.
    for (const auto& server : m.servers) {
      const std::string key = "server." + server.engine;
      out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", attr(key), attr(server.version));
      for (const auto& [name, value] : server.settings)
        out += fmt::format("      <property name=\"{}.{}\" value=\"{}\"/>\n", attr(key), attr(name), attr(value));
      out += fmt::format("      <property name=\"{}.url\" value=\"{}\"/>\n", attr(key),
                         attr(server.url.empty() ? "started by twice" : server.url));
    }
    out += "    </properties>\n" + cases + "  </testsuite>\n";
    tests += suite_tests;
    failures += suite_failures;
    skipped += suite_skipped;
    total_seconds += suite_seconds;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"twice\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">\n"
                     "{}</testsuites>\n",
                     tests, failures, skipped, seconds(total_seconds), differing_suites + suites);
}

}  // namespace twice::reports
