// The HTML report opened in headless Chromium: it must render, run its own
// script under its Content-Security-Policy, log nothing to the console, and
// show the payload as text, never as markup.
#include "reports/html_report.h"


#include <gtest/gtest.h>

#include "external_tool.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

TEST(HtmlReport, IsSelfContainedAndEscapesThePayload) {
  const std::string html = render_html(hostile_matrix());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(count(html, "<script"), 1);  // ours, at the end
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'"), std::string::npos);
  // Nothing to fetch: no src= or link to another origin. The only URL is the SVG namespace.
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  std::string without_ns = html;
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (auto at = without_ns.find(ns); at != std::string::npos; at = without_ns.find(ns, at)) without_ns.erase(at, ns.size());
  EXPECT_EQ(without_ns.find("http://"), std::string::npos);
  EXPECT_EQ(without_ns.find("https://"), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
}

TEST(HtmlReport, NamesTheExpectedMatrixItWasComparedWithEscaped) {
  const std::string html = render_html(hostile_matrix());
  const std::string path = "/tmp/a&lt;b&gt;&amp;&quot;c&quot;`d/expected.toml";
  EXPECT_NE(html.find("cells differ from " + path + "<ul>"), std::string::npos) << html;
  EXPECT_NE(html.find("differs from " + path + "<span class=\"swatch notrun\">"), std::string::npos);
  EXPECT_EQ(html.find(kExpectedPath), std::string::npos);
  EXPECT_EQ(html.find("scenarios/expected.toml"), std::string::npos);
  // A run compared with the default file says so.
  EXPECT_NE(render_html(plain_matrix()).find("✓ The matrix matches scenarios/expected.toml: 4 cells"),
            std::string::npos);
}

TEST(HtmlReport, HasMatrixChartAndSwimlanes) {
  const std::string html = render_html(hostile_matrix());
  EXPECT_NE(html.find("<table class=\"matrix\">"), std::string::npos);
  EXPECT_EQ(count(html, "<td class=\"cell "), 6);
  EXPECT_EQ(count(html, "class=\"cell differs\""), 2);
  EXPECT_EQ(count(html, "class=\"cell notrun\""), 2);
  EXPECT_EQ(count(html, "<svg class=\"swimlanes\""), 2);
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 1);
  EXPECT_EQ(count(html, "<g class=\"bar\">"), 2);
  // Each step box carries its full statement as a tooltip.
  EXPECT_NE(html.find("<title>0.100s  UPDATE orders SET status = &#39;PAID&#39;"), std::string::npos);
  EXPECT_NE(html.find("≥ 0.20%"), std::string::npos);  // PCT bound
}

// A red run is read from the top: the banner links each differing cell to its
// counterexample, which comes before those of the known bugs; the matrix
// scrolls in its own box with the handler column stuck to the left.
TEST(HtmlReport, DifferingCellsComeFirstLinkedFromTheBannerInAScrollingMatrix) {
  const std::string html = render_html(hostile_matrix());
  const std::size_t box = html.find("<div class=\"scroll matrix-box\"><table class=\"matrix\">");
  ASSERT_NE(box, std::string::npos);
  EXPECT_NE(html.find("table.matrix tbody th, table.matrix thead th:first-child { position: sticky; left: 0;"),
            std::string::npos);
  // The regression's counterexample is cx-0 and the banner links to it.
  const std::size_t regression = html.find("<article class=\"cx differs\" id=\"cx-0\">");
  ASSERT_NE(regression, std::string::npos);
  EXPECT_LT(regression, html.find("<article class=\"cx \" id=\"cx-1\">"));
  const std::size_t link = html.find("(<a href=\"#cx-0\">counterexample</a>)<div class=\"replay\">");
  ASSERT_NE(link, std::string::npos);
  EXPECT_LT(link, box);  // in the banner, above the matrix
}

// The banner gives each differing cell's replay command, as the Markdown
// banner does: that of the violation that made it differ.
TEST(HtmlReport, TheBannerGivesTheReplayOfTheViolationThatMadeTheCellDiffer) {
  const std::string html = render_html(mismatch_matrix());
  const std::size_t box = html.find("<div class=\"scroll matrix-box\">");
  const std::size_t replay = html.find("<code>twice replay --handler check-then-act --scenario concurrent-duplicates "
                                       "--seed 222 --shrunk --invariant payload_missing</code>");
  ASSERT_NE(replay, std::string::npos);
  EXPECT_LT(replay, box);
  EXPECT_LT(html.find("(<a href=\"#cx-1\">counterexample</a>)"), replay);
}

struct ChromiumRun {
  int exit_code = -1;
  std::string dom;
  std::string log;
};

ChromiumRun open_in_chromium(const std::string& chromium, const std::filesystem::path& page, const ScratchDir& dir) {
  const std::string profile = (dir / "profile").string();
  const std::string command =
      "timeout 60 " + shell_quote(chromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --user-data-dir=" + shell_quote(profile) +
      " --enable-logging=stderr --v=0 --dump-dom " + shell_quote("file://" + page.string()) + " 2>" +
      shell_quote((dir / "chromium.log").string());
  ChromiumRun run;
  const auto r = run_command(command);
  run.exit_code = r.exit_code;
  run.dom = r.output;
  run.log = read_file(dir / "chromium.log");
  return run;
}

// Chromium logs each console message, CSP violation and uncaught exception of
// the page as "INFO:CONSOLE(...)" (or ":CONSOLE:"); the report writes none.
std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from < log.size()) {
    std::size_t nl = log.find('\n', from);
    if (nl == std::string::npos) nl = log.size();
    const std::string line = log.substr(from, nl - from);
    if (line.find("CONSOLE") != std::string::npos) out.push_back(line);
    from = nl + 1;
  }
  return out;
}

TEST(HtmlReport, ChromiumRendersItWithNoConsoleError) {
  const std::string chromium = find_program("chromium");
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed (Debian package chromium)";
  ScratchDir dir;

  // A control first: a page with an error and a blocked load must be caught.
  write_file(dir / "control.html",
             "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">"
             "</head><body><img src=\"http://127.0.0.1:9/x.png\"></body></html>");
  const ChromiumRun control = open_in_chromium(chromium, dir / "control.html", dir);
  ASSERT_EQ(control.exit_code, 0) << control.log;
  EXPECT_FALSE(console_lines(control.log).empty()) << "the console check sees nothing:\n" << control.log;

  write_file(dir / "report.html", render_html(hostile_matrix()));
  const ChromiumRun run = open_in_chromium(chromium, dir / "report.html", dir);
  ASSERT_EQ(run.exit_code, 0) << run.log;
  for (const auto& line : console_lines(run.log)) ADD_FAILURE() << "console: " << line;
  // Our script ran (so its CSP hash is right), and it is the only script.
  EXPECT_NE(run.dom.find("<html lang=\"en\" data-ready=\"1\">"), std::string::npos) << run.dom.substr(0, 400);
  EXPECT_EQ(count(run.dom, "<script"), 1);
  EXPECT_NE(run.dom.find("<table class=\"matrix\">"), std::string::npos);
  EXPECT_EQ(count(run.dom, "<svg class=\"swimlanes\""), 2);
  // The payload is text in the DOM, the way the browser serialises text.
  EXPECT_NE(run.dom.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(run.dom.find("<script>alert"), std::string::npos);
}

// An interrupted run whose finished cells all match is no green "matrix
// matches", in the banner or the page's title.
TEST(HtmlReport, AnInterruptedRunIsNeverSaidToMatch) {
  results::MatrixResult m = plain_matrix();
  m.cells.pop_back();
  m.interrupted = true;
  const std::string html = render_html(m);
  EXPECT_NE(html.find("<title>twice report: interrupted</title>"), std::string::npos);
  EXPECT_EQ(html.find("banner ok"), std::string::npos);
  EXPECT_EQ(html.find("matches"), std::string::npos);
  EXPECT_NE(html.find("<p>No cell that ran differs from scenarios/expected.toml: 3 cells, 2 pass, 1 known bug caught "
                      "as expected.</p>"),
            std::string::npos);
}

}  // namespace
}  // namespace twice::reports
