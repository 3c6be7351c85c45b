// A cell whose handler left processes running (a daemon, killed when the cell
// ended: CellResult::processes_left) says so in every format, where a reader
// of that format looks, with the handler's and scenario's names escaped for
// it; a cell that left none is written exactly as before the count existed
// (the default matrix's reports stay byte for byte the same).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "external_tool.h"
#include "report_fixture.h"
#include "reports/escape.h"
#include "reports/html_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"

namespace twice::reports {
namespace {

using namespace testing;

constexpr const char* kOne = "the handler left 1 process running when the cell ended; twice killed it";
constexpr const char* kTwo = "the handler left 2 processes running when the cell ended; twice killed them";

// hostile_matrix() with its pass (check-then-act × the scenario whose name is
// markup) leaving 1 process and its regression (the handler whose name is
// markup) leaving 2; `left` false: none.
results::MatrixResult leaving(bool left) {
  results::MatrixResult m = hostile_matrix();
  if (left) {
    m.cells[1].processes_left = 1;
    m.cells[3].processes_left = 2;
  }
  return m;
}

const results::CellResult& pass_cell(const results::MatrixResult& m) { return m.cells[1]; }
const results::CellResult& regression_cell(const results::MatrixResult& m) { return m.cells[3]; }

// Removes the first `part` from `text`; false when it is not there.
bool erase_once(std::string& text, const std::string& part) {
  const std::size_t at = text.find(part);
  if (at == std::string::npos) return false;
  text.erase(at, part.size());
  return true;
}

// Each format: the notes where they belong, and with them taken out, the
// very report of the same cells leaving nothing. (The text report and the
// JSON said it before these: tests/hostile/processes_test.sh and
// json_report_test.cpp hold them to it.)
TEST(ProcessesLeftReports, TheMarkdownListsThemUnderTheMatrixEscaped) {
  const auto m = leaving(true);
  std::string md = render_markdown(m);
  const std::string section = "\n### Processes left running\n\n- " + markdown_text(pass_cell(m).handler) + " × " +
                              markdown_text(pass_cell(m).scenario) + ": " + kOne + "\n- " +
                              markdown_text(regression_cell(m).handler) + " × " +
                              markdown_text(regression_cell(m).scenario) + ": " + kTwo + "\n";
  EXPECT_EQ(section.find("<script"), std::string::npos);  // the names' markup is text
  // Below the matrix and its legend, before the statistics.
  EXPECT_LT(md.find("| --- |"), md.find(section)) << md;
  EXPECT_LT(md.find(section), md.find("### Statistics")) << md;
  EXPECT_TRUE(erase_once(md, section)) << md;
  EXPECT_EQ(md, render_markdown(leaving(false)));
}

TEST(ProcessesLeftReports, TheHtmlSaysItInTheMatrixCell) {
  const auto m = leaving(true);
  std::string html = render_html(m);
  // The pass cell's note ends it; the regression's follows what it expected.
  const std::string pass_note = std::string("pass<small>0/200</small><small>") + kOne + "</small></td>";
  const std::string regression_note = "<small>" + std::string(kTwo) + "</small>";
  EXPECT_NE(html.find(pass_note), std::string::npos) << html.substr(html.find("<table class=\"matrix\""), 3000);
  EXPECT_TRUE(erase_once(html, "<small>" + std::string(kOne) + "</small>"));
  EXPECT_TRUE(erase_once(html, regression_note));
  EXPECT_EQ(html, render_html(leaving(false)));
}

TEST(ProcessesLeftReports, TheJunitSaysItInTheCellsOutputOrFailure) {
  const auto m = leaving(true);
  std::string xml = render_junit(m);
  EXPECT_TRUE(erase_once(xml, std::string(kOne) + "\n"));
  EXPECT_TRUE(erase_once(xml, std::string(kTwo) + "\n"));
  EXPECT_EQ(xml, render_junit(leaving(false)));
  if (find_program("python3").empty()) GTEST_SKIP() << "python3 not installed (Debian package python3)";
  // As a CI viewer shows them: the pass in its output, the regression in its failure.
  ScratchDir dir;
  write_file(dir / "r.junit.xml", render_junit(m));
  const auto r = run_command("python3 " + shell_quote((test_source_dir() / "read_junit.py").string()) + " " +
                             shell_quote((dir / "r.junit.xml").string()) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  std::string pass_out, regression_failure;
  for (const auto& suite : doc["suites"])
    for (const auto& c : suite["cases"]) {
      if (c["classname"] == pass_cell(m).handler && c["name"] == pass_cell(m).scenario) pass_out = c["system_out"];
      if (c["classname"] == regression_cell(m).handler && c["name"] == regression_cell(m).scenario)
        regression_failure = c["failure_text"];
    }
  EXPECT_NE(pass_out.find(kOne), std::string::npos) << pass_out;
  EXPECT_NE(regression_failure.find(kTwo), std::string::npos) << regression_failure;
}

}  // namespace
}  // namespace twice::reports
