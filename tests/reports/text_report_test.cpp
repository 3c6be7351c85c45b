// The terminal report: it names the expected matrix the run was compared
// with, and a path from the command line reaches the terminal only after its
// control characters were made visible.
#include "reports/text_report.h"

#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/escape.h"

#include "external_tool.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

TEST(TextReport, NamesTheExpectedMatrixItWasComparedWith) {
  const std::string text = render_text(hostile_matrix(), TextOptions{});
  EXPECT_NE(text.find("2 cells differ from " + kExpectedPath + ":\n"), std::string::npos) << text;
  // What to do with an intended difference, under the list of differing cells.
  EXPECT_NE(text.find("\n  If a difference is intended, change " + kExpectedPath +
                      " to say so (docs/ci.md, \"When the run is red\").\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("! = differs from " + kExpectedPath + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("scenarios/expected.toml"), std::string::npos);
  EXPECT_NE(render_text(plain_matrix(), TextOptions{}).find("matrix matches scenarios/expected.toml (4 cells)\n"),
            std::string::npos);
}

TEST(TextReport, ControlCharactersOfTheExpectedPathAreMadeVisible) {
  results::MatrixResult m = plain_matrix();
  m.expected_path = "/tmp/a\x1b[2J\nb/expected.toml";
  const std::string text = render_text(m, TextOptions{});
  EXPECT_NE(text.find("matrix matches /tmp/a\\x1b[2J\\nb/expected.toml (4 cells)"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);  // colour is off: no escape sequence at all
  EXPECT_EQ(text.find(m.expected_path), std::string::npos);
}


std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl - start));
  return out;
}

TEST(TextReport, TheVerdictIsTheFirstAndTheLastLine) {
  const auto plain = lines_of(render_text(plain_matrix(), TextOptions{}));
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain.front(), "matrix matches scenarios/expected.toml (4 cells)");
  EXPECT_EQ(plain.back(), plain.front());
  const auto hostile = lines_of(render_text(hostile_matrix(), TextOptions{}));
  EXPECT_EQ(hostile.back(), "2 cells differ from " + kExpectedPath);
  EXPECT_EQ(hostile.front(), "interrupted: the matrix is incomplete");
}

TEST(TextReport, KnownBugsCaughtAsExpectedShowNoCounterexampleUnlessAskedFor) {
  const std::string quiet = render_text(plain_matrix(), TextOptions{});
  EXPECT_EQ(quiet.find("replay this counterexample"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("1 counterexample of known bugs caught as expected not shown (--show all shows them)\n"),
            std::string::npos)
      << quiet;
  TextOptions all;
  all.show_all = true;
  EXPECT_NE(render_text(plain_matrix(), all).find("replay this counterexample"), std::string::npos);
}

TEST(TextReport, AWideMatchingMatrixFitsOneHundredColumnsInBlocks) {
  results::MatrixResult m;
  m.handlers = {"a-handler-with-a-name-much-longer-than-any-column-allows", "cas"};
  for (int i = 0; i < 60; ++i) m.scenarios.push_back(fmt::format("scenario-number-{}-with-a-long-name", i));
  for (const auto& h : m.handlers)
    for (const auto& s : m.scenarios) {
      results::CellResult c;
      c.handler = h;
      c.scenario = s;
      c.seeds_run = 100;
      c.matched = true;
      m.cells.push_back(c);
    }
  TextOptions o;
  o.reports_at = "twice-report/ (md, json, junit.xml, html)";
  const std::string text = render_text(m, o);
  for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), kTextWidth) << line;
  EXPECT_NE(text.find("60 scenario-number-59-with-a-long-name"), std::string::npos) << text;  // the legend
  EXPECT_NE(text.find("full reports: twice-report/ (md, json, junit.xml, html)\n"), std::string::npos) << text;
}

// The counterexample of plain_matrix()'s first cell that has one.
std::pair<results::CellResult, results::ViolationResult> a_counterexample() {
  for (const auto& c : plain_matrix().cells)
    if (!c.violations.empty()) return {c, c.violations.front()};
  ADD_FAILURE() << "plain_matrix() has no counterexample";
  return {};
}

bool valid_utf8(const std::string& s) { return printable_utf8(s) == s; }

// A task's column heading carries an order number from the scenario file:
// escape sequences and newlines in it stay visible text, and a heading or a
// cell cut to fit its column is cut between characters, not inside one.
TEST(TextReport, TranscriptHeadingsAndCellsAreEscapedAndCutBetweenCharacters) {
  auto [cell, v] = a_counterexample();
  ASSERT_FALSE(v.counterexample.columns.empty());
  v.counterexample.columns[0] = "T1: notify \x1b[31mRED\x1b]0;pwned\x07 #1\n| x |";
  std::string accents;
  for (int i = 0; i < 60; ++i) accents += "\xc3\xa9";  // é
  v.counterexample.columns.back() = "T9: notify " + accents;
  v.counterexample.rows.front().text = "SELECT '" + accents + "'";
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  // Cut to its column (45 characters), the escapes still shown.
  EXPECT_NE(text.find("| T1: notify \\x1b[31mRED\\x1b]0;pwned\\x07 #1\\n|  |"), std::string::npos) << text;
  EXPECT_TRUE(valid_utf8(text)) << text;
  EXPECT_EQ(text.find("\xc3\n"), std::string::npos);
}

// Whether it was shrunk is what the explorer says, not what the replay
// command looks like: an exhaustive counterexample's replay is a --schedule,
// never --shrunk, and it was shrunk all the same.
TEST(TextReport, ACounterexampleNotShrunkSaysSo) {
  auto [cell, v] = a_counterexample();
  EXPECT_NE(render_counterexample(cell, v, TextOptions{}).find("  shrunk to "), std::string::npos);
  v.counterexample.shrunk = false;  // a budget of 0
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_EQ(text.find("shrunk to"), std::string::npos) << text;
  EXPECT_NE(text.find("  not shrunk (a shrink budget of 0): "), std::string::npos) << text;
  v.counterexample.shrunk = true;
  v.counterexample.preemptions = 1;
  v.counterexample.replay_command = "twice replay --handler h --scenario s --strategy exhaustive --schedule 0.1.0x8";
  v.counterexample.replay_shrunk_command = "twice replay --handler h --scenario s --strategy exhaustive --schedule 1.0x9";
  const std::string exhaustive = render_counterexample(cell, v, TextOptions{});
  EXPECT_NE(exhaustive.find("  shrunk to "), std::string::npos) << exhaustive;
  EXPECT_EQ(exhaustive.find("not shrunk"), std::string::npos) << exhaustive;
}

// A seed that did not show its violation again (a handler keeping state
// across runs: no run told the story) has no transcript: no empty table is drawn for it.
TEST(TextReport, ACounterexampleWithoutATranscriptDrawsNoEmptyTable) {
  auto [cell, v] = a_counterexample();
  v.counterexample.rows.clear();
  v.counterexample.steps = 0;
  v.counterexample.balances.clear();
  v.counterexample.detail.clear();
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_NE(text.find("its seed did not show it: no transcript to show"), std::string::npos) << text;
  // It was run again after the cell's other runs, in the same process: not on its own.
  EXPECT_NE(text.find("run again after the cell's other runs, to be shrunk,"), std::string::npos) << text;
  EXPECT_EQ(text.find("on its own"), std::string::npos) << text;
  EXPECT_EQ(text.find("step time"), std::string::npos) << text;
  EXPECT_EQ(text.find("balances at the end"), std::string::npos) << text;
  EXPECT_NE(text.find("replay the failing run:"), std::string::npos) << text;
}

// Every notify lost: the run shows the violation and no handler task ran.
// The story is the gateway's lines and the balances, with both replays.
TEST(TextReport, ACounterexampleWithNoHandlerStepsTellsTheGatewaysStory) {
  auto [cell, v] = a_counterexample();
  auto& cex = v.counterexample;
  cex.rows.clear();
  cex.columns.clear();
  cex.steps = 0;
  cex.gateway = {"[      0.000s] gw   fault notify O-4002 attempt 1 is lost", "[  25h00m00.000s] gw   event retries exhausted"};
  cex.balances = {"erin: balance 0, ledger credits 0, should be 3000  <-- wrong"};
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_EQ(text.find("did not show it"), std::string::npos) << text;
  EXPECT_NE(text.find("  shrunk to 0 steps: no handler task ran for it\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("step time"), std::string::npos) << text;
  EXPECT_NE(text.find("retries exhausted"), std::string::npos) << text;
  EXPECT_NE(text.find("erin: balance 0"), std::string::npos) << text;
  EXPECT_NE(text.find("replay the failing run:   " + cex.replay_command + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("replay this counterexample: " + cex.replay_shrunk_command + "\n"), std::string::npos) << text;
}

// A "cut" row of a long transcript stands for its steps: those after it keep
// the numbers they have in the run.
TEST(TextReport, StepsAfterACutRowKeepTheirNumbers) {
  auto [cell, v] = a_counterexample();
  auto& cex = v.counterexample;
  cex.rows.insert(cex.rows.begin() + 2, results::TranscriptRow{0, "0.041s", "cut", "... 500 steps of T1 left out ...", "", false, 500});
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_NE(text.find("... 500 steps of T1 left out ..."), std::string::npos) << text;
  // Step 1 before the cut; the lock step after it is 502.
  EXPECT_NE(text.find("\n  1    0.040s"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  502  0.070s"), std::string::npos) << text;
}

// A handler that polls until its step budget kills it makes tens of
// thousands of rows: the table shows the first 150 and the last 100, says how
// many it leaves out, and numbers the last ones as the run did.
TEST(TextReport, AVeryLongTranscriptShowsItsStartAndEndAndSaysWhatItLeavesOut) {
  auto [cell, v] = a_counterexample();
  auto& cex = v.counterexample;
  cex.rows.clear();
  for (int i = 1; i <= 1000; ++i)
    cex.rows.push_back(results::TranscriptRow{0, "0.001s", "sql", fmt::format("SELECT {}", i), "1 row", true, 0});
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_NE(text.find("SELECT 150 "), std::string::npos) << text;
  EXPECT_EQ(text.find("SELECT 151 "), std::string::npos);
  EXPECT_EQ(text.find("SELECT 900 "), std::string::npos);
  EXPECT_NE(text.find("  ... 750 rows not shown here; the replay command below prints the whole run\n"),
            std::string::npos);
  EXPECT_NE(text.find("\n  901  0.001s    | SELECT 901 "), std::string::npos);
  EXPECT_NE(text.find("\n  1000 0.001s    | SELECT 1000 "), std::string::npos);
  EXPECT_LT(text.size(), 40'000u);
}

// A run of thousands of tasks (a scenario past the run's step budget): the
// transcript is a list naming each line's task, and the gateway's lines are
// cut as a long transcript's rows are. A table of a column per task made
// lines of 800 KB, 821 MB of output in all.
TEST(TextReport, ARunOfManyTasksIsAListAndItsGatewayLinesAreCut) {
  auto [cell, v] = a_counterexample();
  auto& cex = v.counterexample;
  cex.columns.clear();
  cex.rows.clear();
  for (int t = 1; t <= 5000; ++t) {
    cex.columns.push_back(fmt::format("T{}: notify O-{} #1", t, t));
    cex.rows.push_back(results::TranscriptRow{t - 1, "0.001s", "sql", fmt::format("SELECT {}", t), "1 row", true, 0});
  }
  cex.gateway.clear();
  for (int i = 1; i <= 5000; ++i) cex.gateway.push_back(fmt::format("[0.000s] gw   event line {}", i));
  const std::string text = render_counterexample(cell, v, TextOptions{});
  EXPECT_NE(text.find("  (5000 tasks: too many for a column each; each line names its task)\n"), std::string::npos)
      << text.substr(0, 2000);
  EXPECT_NE(text.find("\n  1    0.001s    T1: notify O-1 #1: SELECT 1  -> 1 row\n"), std::string::npos)
      << text.substr(0, 2000);
  EXPECT_NE(text.find("\n  5000 0.001s    T5000: notify O-5000 #1: SELECT 5000  -> 1 row\n"), std::string::npos);
  EXPECT_NE(text.find("    ... 4750 lines not shown here; the replay command below prints them all\n"),
            std::string::npos);
  EXPECT_EQ(text.find("event line 151\n"), std::string::npos);
  EXPECT_NE(text.find("event line 5000\n"), std::string::npos);
  std::size_t longest = 0;
  for (std::size_t at = 0, next; at < text.size(); at = next + 1) {
    next = text.find('\n', at);
    if (next == std::string::npos) next = text.size();
    longest = std::max(longest, next - at);
  }
  EXPECT_LE(longest, 200u);
  EXPECT_LT(text.size(), 100'000u);
}

// A time past nine characters ("53h03m15.900s", a retry two days on) widens
// the time column for every row: each row's bar stays where the header's is.
TEST(TextReport, ALongTimeWidensTheTimeColumnAndTheBarsStayInLine) {
  auto [cell, v] = a_counterexample();
  auto& cex = v.counterexample;
  ASSERT_GE(cex.rows.size(), 2u);
  cex.rows.back().time = "53h03m15.900s";
  cex.rows.back().text = std::string(120, 'x');  // wraps: its second line is indented as far
  const std::string text = render_counterexample(cell, v, TextOptions{});
  const std::size_t table = text.find("  step time");
  ASSERT_NE(table, std::string::npos) << text;
  const std::size_t bar = text.find('|', table) - table;
  EXPECT_EQ(bar, 2u + 5u + 14u) << text;
  std::size_t at = text.find('\n', table) + 1;
  int rows = 0;
  for (; at < text.size() && text.compare(at, 2, "  ") == 0 && text.find('|', at) < text.find('\n', at);
       at = text.find('\n', at) + 1, ++rows)
    EXPECT_EQ(text.find('|', at) - at, bar) << text.substr(at, text.find('\n', at) - at);
  EXPECT_GT(rows, 2) << text;
  // Short times keep the column as wide as before.
  auto [cell2, v2] = a_counterexample();
  const std::string narrow = render_counterexample(cell2, v2, TextOptions{});
  EXPECT_EQ(narrow.find('|', narrow.find("  step time")) - narrow.find("  step time"), 2u + 5u + 10u) << narrow;
}

// A cell that shows a violation the expected matrix does not list, beside
// the one it does, is labelled as such; a lost canary reads as in the other
// reports.
TEST(TextReport, AMismatchAndALostCanaryAreLabelled) {
  results::MatrixResult m = plain_matrix();
  for (auto& c : m.cells) {
    if (c.violations.empty()) continue;
    auto extra = c.violations.front();
    extra.invariant = "lost_update";
    c.violations.push_back(extra);
    c.matched = false;
  }
  const std::string text = render_text(m, TextOptions{});
  EXPECT_NE(text.find("check-then-act × concurrent-duplicates: expected double_credit, observed double_credit 3/200, "
                      "lost_update 3/200 (not expected: lost_update)"),
            std::string::npos)
      << text;
  const std::string hostile = render_text(hostile_matrix(), TextOptions{});
  EXPECT_NE(hostile.find("(a known bug is no longer caught)"), std::string::npos) << hostile;
  // At its 200 seeds, nothing more; at 50 (fewer than the expected matrix
  // holds at), the text says a known bug may not have shown yet.
  EXPECT_EQ(hostile.find("note: the expected matrix holds at"), std::string::npos) << hostile;
  results::MatrixResult few = hostile_matrix();
  few.seeds = 50;
  EXPECT_NE(render_text(few, TextOptions{})
                .find("note: the expected matrix holds at 100 seeds per cell; at 50 a known bug may not show yet:\n"
                      "  run --seeds 100 or more before taking \"no longer caught\" for a regression\n"),
            std::string::npos);
}

// An exhaustive search its budget ended before every schedule that has not
// met a known bug says so, as a run of few seeds does; a complete search
// that misses it does not (it is a regression).
TEST(TextReport, ASearchCutShortByItsBudgetThatMissesAKnownBugSaysSo) {
  results::MatrixResult m = exhaustive_matrix();
  results::CellResult* c = nullptr;
  for (auto& cell : m.cells)
    if (cell.handler == "check-then-act" && cell.scenario == "concurrent-duplicates") c = &cell;
  ASSERT_NE(c, nullptr);
  c->violations.clear();
  c->failing_runs = 0;
  c->failing_run_indices.clear();
  c->matched = false;
  c->exhaustive->complete = false;
  const std::string note = "note: a search that ran out of its budget before every schedule may not have reached a "
                           "known bug yet:\n  raise --budget (0: no limit) before taking \"no longer caught\" for a "
                           "regression\n";
  EXPECT_NE(render_text(m, TextOptions{}).find(note), std::string::npos) << render_text(m, TextOptions{});
  c->exhaustive->complete = true;
  EXPECT_EQ(render_text(m, TextOptions{}).find("note: a search"), std::string::npos);
}

// The cells a stop ended early are listed with the seeds they ran.
TEST(TextReport, CellsCutShortByAStopAreListedWithTheSeedsTheyRan) {
  results::MatrixResult m = plain_matrix();
  m.cells.front().cut_short = true;
  m.cells.front().seeds_run = 37;
  m.interrupted = true;
  const std::string text = render_text(m, TextOptions{});
  EXPECT_NE(text.find("cut short by the stop (each verdict is of the seeds that ran):\n  " + m.cells.front().handler +
                      " × " + m.cells.front().scenario + ": 37 of 200 seeds\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(render_text(plain_matrix(), TextOptions{}).find("cut short"), std::string::npos);
}

}  // namespace
}  // namespace twice::reports
