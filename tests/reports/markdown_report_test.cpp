// The Markdown report read back by what reads it on GitHub: cmark-gfm (the
// renderer GitHub's Markdown comes from) for the tables and text, and
// Mermaid's own parser for every diagram.
#include "reports/markdown_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/html_report.h"

#include "external_tool.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

// The ```mermaid blocks of a Markdown text, without their fences.
std::vector<std::string> mermaid_blocks(const std::string& md) {
  std::vector<std::string> out;
  const std::string open = "```mermaid\n";
  for (std::size_t at = md.find(open); at != std::string::npos; at = md.find(open, at + 1)) {
    const std::size_t start = at + open.size();
    const std::size_t end = md.find("\n```\n", start);
    if (end == std::string::npos) break;
    out.push_back(md.substr(start, end + 1 - start));
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.push_back(text.substr(from, nl - from));
    from = nl + 1;
  }
  if (from < text.size()) out.push_back(text.substr(from));
  return out;
}

TEST(MarkdownReport, EveryTableRowHasItsHeadersCellCount) {
  const std::string md = render_markdown(hostile_matrix());
  int header_pipes = -1;
  int tables = 0;
  for (const auto& line : lines_of(md)) {
    if (!line.starts_with("|")) {
      header_pipes = -1;
      continue;
    }
    const int pipes = count(line, "|");
    if (header_pipes < 0) {
      header_pipes = pipes;
      ++tables;
    }
    EXPECT_EQ(pipes, header_pipes) << line;
  }
  EXPECT_EQ(tables, 4);  // matrix, statistics, two transcripts
}

// The text outside fenced code blocks, whose content Markdown shows verbatim.
std::string outside_fences(const std::string& md) {
  std::string out;
  bool in_fence = false;
  for (const auto& line : lines_of(md)) {
    if (line.starts_with("```")) in_fence = !in_fence;
    else if (!in_fence) out += line + "\n";
  }
  return out;
}

TEST(MarkdownReport, UntrustedTextIsNeverMarkup) {
  const std::string all = render_markdown(hostile_matrix());
  const std::string md = outside_fences(all);
  EXPECT_EQ(md.find("<script"), std::string::npos);
  EXPECT_EQ(md.find("](javascript"), std::string::npos);
  EXPECT_EQ(md.find("@here"), std::string::npos);  // no mention
  EXPECT_NE(md.find("&#60;script&#62;alert(1)&#60;/script&#62;"), std::string::npos);
  // Fenced blocks are closed only by their own fence: every fence line pairs up.
  int open_fences = 0;
  for (const auto& line : lines_of(all))
    if (line.starts_with("```")) open_fences ^= 1;
  EXPECT_EQ(open_fences, 0);
}

TEST(MarkdownReport, ShowsVerdictsStatisticsAndCounterexamples) {
  const std::string md = render_markdown(hostile_matrix());
  EXPECT_NE(md.find("🐞 double&#95;credit caught 5/200"), std::string::npos) << md;
  EXPECT_NE(md.find("❌ **regression**"), std::string::npos);
  EXPECT_NE(md.find("❌ **canary lost**: pass in 200 runs (expected double&#95;credit)"), std::string::npos);
  EXPECT_NE(md.find("⏸️ not run"), std::string::npos);
  EXPECT_NE(md.find("Interrupted"), std::string::npos);
  EXPECT_NE(md.find("2.50% | 1.07% – 5.72%"), std::string::npos) << md;  // 5 of 200, Wilson
  EXPECT_NE(md.find("≥ 0.20% (n=2, k=16, d=3)"), std::string::npos);    // PCT bound 1/(2·16²)
  EXPECT_EQ(mermaid_blocks(md).size(), 2u);
  EXPECT_NE(md.find("twice replay --handler check-then-act"), std::string::npos);
}

TEST(MarkdownReport, NamesTheExpectedMatrixItWasComparedWithInCodeSpans) {
  const std::string md = render_markdown(hostile_matrix());
  // The path holds a backtick: each span is fenced by two.
  const std::string span = "``" + kExpectedPath + "``";
  EXPECT_NE(md.find("❌ **2 of 6 cells differ from " + span + "**"), std::string::npos) << md;
  EXPECT_NE(md.find("❌ differs from " + span + "\n"), std::string::npos);
  EXPECT_NE(md.find("❌ This cell differs from " + span + ": "), std::string::npos);
  // A red run says what to do with an intended difference.
  EXPECT_NE(md.find("\nIf a difference is intended, change " + span +
                    " to say so (docs/ci.md, \"When the run is red\").\n"),
            std::string::npos)
      << md;
  // Every occurrence of the path is inside such a span.
  EXPECT_EQ(count(md, kExpectedPath), 4);
  EXPECT_EQ(count(md, span), 4);
  EXPECT_EQ(md.find("scenarios/expected.toml"), std::string::npos);
  EXPECT_NE(render_markdown(plain_matrix()).find("✅ **The matrix matches `scenarios/expected.toml`**: 4 cells"),
            std::string::npos);
}

// The lines our Mermaid diagrams may have, read by hand (no <regex>: GCC 12
// warns inside it under the sanitizers, and these tests run there too):
//   sequenceDiagram | participant A as TEXT | A->>B: TEXT | A-->>B: TEXT | Note over A: TEXT
// where an actor is gw, db, locks or t<digits>, and TEXT is not empty, has
// no ';' '%' or newline, and has '#' only in entity codes ("#35;").
std::size_t actor_length(std::string_view s) {
  for (std::string_view a : {"gw", "db", "locks"})
    if (s.starts_with(a)) return a.size();
  if (!s.starts_with("t")) return 0;
  std::size_t n = 1;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  return n > 1 ? n : 0;
}

bool is_mermaid_text(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ';' || s[i] == '%' || s[i] == '\n') return false;
    if (s[i] != '#') continue;
    std::size_t j = i + 1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j == i + 1 || j >= s.size() || s[j] != ';') return false;
    i = j;
  }
  return true;
}

bool is_mermaid_line_we_write(std::string_view l) {
  if (l == "sequenceDiagram") return true;
  if (!l.starts_with("    ")) return false;
  l.remove_prefix(4);
  auto take_actor = [&l]() {
    const std::size_t n = actor_length(l);
    l.remove_prefix(n);
    return n > 0;
  };
  auto take = [&l](std::string_view word) {
    if (!l.starts_with(word)) return false;
    l.remove_prefix(word.size());
    return true;
  };
  if (take("participant ")) return take_actor() && take(" as ") && is_mermaid_text(l);
  if (take("Note over ")) return take_actor() && take(": ") && is_mermaid_text(l);
  return take_actor() && (take("->>") || take("-->>")) && take_actor() && take(": ") && is_mermaid_text(l);
}

// A red run whose one regression is in the last handler, after more known
// bugs than the size budget holds: the regression comes first, whole, with
// its replay command, and the banner links to it.
TEST(MarkdownReport, CellsThatDifferComeFirstWholeAndTheBudgetLeavesOutKnownBugs) {
  results::MatrixResult m = plain_matrix();
  const results::CellResult caught = *m.cell("check-then-act", "concurrent-duplicates");
  m.scenarios.clear();
  m.cells.clear();
  // 4 handlers × 60 scenarios of known bugs with long transcripts: far over 900 KiB.
  for (const std::string h : {"a", "b", "c", "last"}) {
    if (h != "a") m.handlers.push_back(h);
    for (int i = 0; i < 60; ++i) {
      results::CellResult c = caught;
      c.handler = h;
      c.scenario = fmt::format("s{}", i);
      for (auto& row : c.violations.front().counterexample.rows) row.text += std::string(400, 'x');
      m.cells.push_back(c);
    }
  }
  m.handlers = {"a", "b", "c", "last"};
  for (int i = 0; i < 60; ++i) m.scenarios.push_back(fmt::format("s{}", i));
  results::CellResult& regression = m.cells.back();
  regression.expected.clear();
  regression.matched = false;
  regression.violations.front().counterexample.replay_shrunk_command =
      "twice replay --handler last --scenario s59 --seed 77 --shrunk";

  const std::string md = render_markdown(m);
  EXPECT_NE(md.find("left out to stay under GitHub's summary size limit"), std::string::npos);  // the budget bit
  const std::size_t heading = md.find("#### ❌ last × s59: double&#95;credit");
  ASSERT_NE(heading, std::string::npos);
  EXPECT_LT(heading, md.find("#### 🐞"));  // before every known bug
  EXPECT_NE(md.find("[counterexample](#twice-differs-1)"), std::string::npos);
  EXPECT_LT(md.find("<a id=\"twice-differs-1\"></a>"), heading);
  // In the banner, and again in the counterexample's replay block.
  const std::size_t banner = md.find("<code>twice replay --handler last --scenario s59 --seed 77 --shrunk</code>");
  EXPECT_LT(banner, md.find("| handler |"));
  EXPECT_NE(md.find("twice replay --handler last --scenario s59 --seed 77 --shrunk", heading), std::string::npos);
}

// The banner gives a mismatch cell's new violation (not the expected one the
// cell also shows, nor the first by name) and links to its counterexample.
TEST(MarkdownReport, TheBannerGivesTheReplayOfTheViolationThatMadeTheCellDiffer) {
  const std::string md = render_markdown(mismatch_matrix());
  const std::size_t matrix = md.find("| handler |");
  const std::size_t replay = md.find("<code>twice replay --handler check-then-act --scenario concurrent-duplicates "
                                     "--seed 222 --shrunk --invariant payload&#95;missing</code>");
  ASSERT_NE(replay, std::string::npos) << md;
  EXPECT_LT(replay, matrix);
  EXPECT_LT(md.find("([counterexample](#twice-differs-2))"), replay) << md;
  EXPECT_NE(md.find("(not expected: payload&#95;missing)"), std::string::npos) << md;
}

// A statement cut to fit a diagram's arrow keeps its WHERE clause.
TEST(MarkdownReport, MermaidKeepsTheWhereClauseOfALongStatement) {
  results::MatrixResult m = plain_matrix();
  for (auto& c : m.cells)
    for (auto& v : c.violations)
      v.counterexample.rows[1].text =
          "UPDATE orders SET status = 'PAID', transaction_id = '4200000003', paid_at = 1234567 WHERE order_no = "
          "'O-2001' AND status <> 'CLOSED'";
  const std::string md = render_markdown(m);
  const std::size_t diagram = md.find("```mermaid");
  ASSERT_NE(diagram, std::string::npos);
  const std::string arrow = md.substr(diagram, md.find("```", diagram + 3) - diagram);
  EXPECT_NE(arrow.find("db: 1. UPDATE orders SET s… WHERE order_no = 'O#45;2001' AND status #60;#62; 'CLOSED'\n"),
            std::string::npos)
      << arrow;
}

// Every cell differs (a run against an empty expected matrix): the summary
// still fits GitHub's 1 MiB, and every differing cell keeps its anchor and its
// replay command, whole transcripts first while they fit.
TEST(MarkdownReport, ManyDifferingCellsStillFitTheSummaryLimit) {
  results::MatrixResult m = plain_matrix();
  const results::CellResult caught = *m.cell("check-then-act", "concurrent-duplicates");
  m.scenarios.clear();
  m.cells.clear();
  m.handlers = {"h"};
  for (int i = 0; i < 400; ++i) {
    results::CellResult c = caught;
    c.handler = "h";
    c.scenario = fmt::format("s{}", i);
    c.expected.clear();
    c.matched = false;
    for (auto& row : c.violations.front().counterexample.rows) row.text += std::string(400, 'x');
    c.violations.front().counterexample.replay_shrunk_command = fmt::format("twice replay --scenario s{} --shrunk", i);
    m.scenarios.push_back(c.scenario);
    m.cells.push_back(c);
  }
  const std::string md = render_markdown(m);
  EXPECT_LT(md.size(), 1024u * 1024u);
  EXPECT_NE(md.find("counterexamples of differing cells are shown without their transcript to stay under GitHub's "
                    "summary size limit; the HTML and JSON reports have them whole."),
            std::string::npos);
  EXPECT_NE(md.find("<a id=\"twice-differs-400\"></a>"), std::string::npos);
  EXPECT_NE(md.find("twice replay --scenario s399 --shrunk", md.find("<a id=\"twice-differs-400\"></a>")),
            std::string::npos);
}

TEST(MarkdownReport, MermaidDiagramUsesOnlyTheLinesWeMeanToWrite) {
  const auto blocks = mermaid_blocks(render_markdown(hostile_matrix()));
  ASSERT_FALSE(blocks.empty());
  // The reader refuses what it must: a statement separator, a comment, a stray '#', an unknown actor.
  EXPECT_TRUE(is_mermaid_line_we_write("    t12-->>gw: HTTP 200 #35;1"));
  for (const char* bad : {"    gw->>t1: a;b", "    gw->>t1: 50%", "    gw->>t1: #x", "    me->>t1: hi", "    gw->>t1: "})
    EXPECT_FALSE(is_mermaid_line_we_write(bad)) << bad;
  // Text: no ';' (a statement separator), '#' only in entity codes, no '%' (comments).
  for (const auto& block : blocks)
    for (const auto& l : lines_of(block)) EXPECT_TRUE(is_mermaid_line_we_write(l)) << l;
}

TEST(MarkdownReport, CmarkGfmRendersTablesAndKeepsPayloadAsText) {
  const std::string cmark = find_program("cmark-gfm");
  if (cmark.empty()) GTEST_SKIP() << "cmark-gfm not installed (Debian package cmark-gfm)";
  ScratchDir dir;
  write_file(dir / "r.md", render_markdown(hostile_matrix()));
  // --unsafe: render raw HTML as is, so nothing but our own escaping protects the page.
  const auto r = run_command(shell_quote(cmark) + " --unsafe -e table -e autolink -e strikethrough -e tagfilter " +
                             shell_quote((dir / "r.md").string()));
  ASSERT_EQ(r.exit_code, 0);
  const std::string& html = r.output;
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
  EXPECT_EQ(count(html, "<table>"), 4);
  EXPECT_EQ(count(html, "<ol"), 0);  // "1. evil…" at the start of a list item stays text
  EXPECT_EQ(count(html, "<blockquote>"), 2);  // the details of the two counterexamples, nothing nested
  // Pipes and backticks of the payload come out as text inside their cell.
  EXPECT_NE(html.find("a|b ``x`` `y` line1<br>line2"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // The expected matrix's path is code, its markup text.
  EXPECT_EQ(count(html, "<code>/tmp/a&lt;b&gt;&amp;&quot;c&quot;`d/expected.toml</code>"), 4) << html;
  EXPECT_EQ(html.find(kExpectedPath), std::string::npos);
  // Every body row of the matrix has one cell per scenario plus the handler.
  const std::size_t matrix = html.find("<table>");
  const std::size_t matrix_end = html.find("</table>", matrix);
  const std::string table = html.substr(matrix, matrix_end - matrix);
  EXPECT_EQ(count(table, "<th>"), 4);
  EXPECT_EQ(count(table, "<td>"), 2 * 4);
}

TEST(MarkdownReport, MermaidParsesEveryDiagram) {
  const std::string node = find_program("node");
  const auto checker = test_source_dir() / "mermaid_check";
  if (node.empty()) GTEST_SKIP() << "node not installed (Debian package nodejs)";
  if (!std::filesystem::exists(checker / "node_modules" / "mermaid"))
    GTEST_SKIP() << "mermaid not installed: npm ci --prefix " << checker.string();
  ScratchDir dir;
  std::string files;
  int n = 0;
  for (const auto& m : {hostile_matrix(), plain_matrix()})
    for (const auto& block : mermaid_blocks(render_markdown(m))) {
      const auto path = dir / ("d" + std::to_string(n++) + ".mmd");
      write_file(path, block);
      files += " " + shell_quote(path.string());
    }
  // A control in the same run (loading Mermaid takes seconds): a diagram it
  // must reject, so a parser that accepts anything cannot pass.
  const auto broken = dir / "broken.mmd";
  write_file(broken, "sequenceDiagram\n    participant a as A\n    a->>: x; y\n");
  const auto r = run_command(shell_quote(node) + " " + shell_quote((checker / "parse.mjs").string()) + files + " " +
                             shell_quote(broken.string()) + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(count(r.output, "ok "), n) << r.output;
  EXPECT_EQ(count(r.output, "error " + broken.string()), 1) << r.output;
}

// Fewer seeds than the expected matrix holds at, and a known bug missed: the
// Markdown and HTML say what the text says, a reviewer reading them only.
TEST(MarkdownReport, AKnownBugMissedAtFewSeedsGetsTheTextsNote) {
  results::MatrixResult few = hostile_matrix();
  few.seeds = 50;
  const std::string note = "Note**: the expected matrix holds at 100 seeds per cell; at 50 a known bug may not show yet: "
                           "run --seeds 100 or more before taking";
  EXPECT_NE(render_markdown(few).find("> **" + note), std::string::npos) << render_markdown(few);
  EXPECT_EQ(render_markdown(hostile_matrix()).find("seeds per cell; at"), std::string::npos);
  EXPECT_NE(render_html(few).find("<p class=\"muted\">Note: the expected matrix holds at 100 seeds per cell; at 50"),
            std::string::npos);
}

// An interrupted run whose finished cells all match is no green "matrix
// matches": the cells it did not run are unknown.
TEST(MarkdownReport, AnInterruptedRunIsNeverSaidToMatch) {
  results::MatrixResult m = plain_matrix();
  m.cells.pop_back();
  m.interrupted = true;
  const std::string md = render_markdown(m);
  EXPECT_EQ(md.find("matches"), std::string::npos) << md;
  EXPECT_EQ(md.find("✅ **"), std::string::npos) << md;  // the cells keep their marks; no banner
  EXPECT_NE(md.find("⚠️ **Interrupted**: 3 of 4 cells ran; the matrix is incomplete.\n\nNo cell that ran differs from "
                    "`scenarios/expected.toml`: 3 cells, 2 pass, 1 known bug caught as expected."),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace twice::reports
