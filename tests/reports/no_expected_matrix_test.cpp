// A run with no expected matrix (a folder of one's own scenarios without an
// expected.toml): every cell is expected to pass, and no report may name the
// file it looked for as one it read. Each format says what the cells were
// compared with; a run against a real file reads as it always did.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"
#include "reports/text_report.h"

#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

constexpr const char* kDefault = "the default that every cell passes (there is no scenarios/expected.toml)";

// plain_matrix() as a run without an expected.toml sees it: nothing is
// expected to fail, so its double credit is a regression.
results::MatrixResult without_expected_matrix() {
  results::MatrixResult m = plain_matrix();
  m.expected_found = false;
  for (auto& c : m.cells) {
    c.expected.clear();
    c.expected_reason.clear();
    c.matched = c.violations.empty() && c.failures.empty();
  }
  return m;
}

// The same run where every cell passed.
results::MatrixResult all_pass_without_expected() {
  results::MatrixResult m = without_expected_matrix();
  for (auto& c : m.cells) {
    c.violations.clear();
    c.matched = true;
  }
  return m;
}

TEST(NoExpectedMatrix, TheTextSaysEveryCellWasExpectedToPassNotThatTheFileMatched) {
  const std::string pass = render_text(all_pass_without_expected(), TextOptions{});
  EXPECT_NE(pass.find(std::string("matrix matches ") + kDefault + " (4 cells)\n"), std::string::npos) << pass;
  EXPECT_EQ(pass.find("matrix matches scenarios/expected.toml"), std::string::npos) << pass;

  const std::string red = render_text(without_expected_matrix(), TextOptions{});
  EXPECT_NE(red.find(std::string("1 cell differs from ") + kDefault + "\n"), std::string::npos) << red;
  EXPECT_NE(red.find(std::string("1 cell differs from ") + kDefault + ":\n"), std::string::npos) << red;
  EXPECT_NE(red.find(std::string("! = differs from ") + kDefault + "\n"), std::string::npos) << red;
}

TEST(NoExpectedMatrix, TheMarkdownAndHtmlBannersSayItToo) {
  const std::string md = render_markdown(all_pass_without_expected());
  EXPECT_NE(md.find("✅ **The matrix matches the default that every cell passes (there is no "
                    "`scenarios/expected.toml`)**: 4 cells"),
            std::string::npos)
      << md;
  const std::string red_md = render_markdown(without_expected_matrix());
  EXPECT_NE(red_md.find("❌ **1 of 4 cells differs from the default that every cell passes (there is no "
                        "`scenarios/expected.toml`)**"),
            std::string::npos)
      << red_md;
  EXPECT_NE(red_md.find("❌ This cell differs from the default that every cell passes (there is no "
                        "`scenarios/expected.toml`): expected pass"),
            std::string::npos)
      << red_md;

  const std::string html = render_html(all_pass_without_expected());
  EXPECT_NE(html.find(std::string("✓ The matrix matches ") + kDefault + ": 4 cells"), std::string::npos);
  const std::string red_html = render_html(without_expected_matrix());
  EXPECT_NE(red_html.find(std::string("✗ 1 of 4 cells differ from ") + kDefault), std::string::npos);
}

TEST(NoExpectedMatrix, JsonAndJunitCarryAFlagOnlyWhenTheFileWasMissing) {
  const nlohmann::json missing = to_json(without_expected_matrix());
  EXPECT_EQ(missing.at("expected_path"), "scenarios/expected.toml");
  EXPECT_EQ(missing.at("expected_found"), false);
  EXPECT_FALSE(to_json(plain_matrix()).contains("expected_found"));  // a report against a file stays as it was

  const std::string property = "<property name=\"expected_found\" value=\"false\"/>";
  EXPECT_NE(render_junit(without_expected_matrix()).find(property), std::string::npos);
  EXPECT_EQ(render_junit(plain_matrix()).find("expected_found"), std::string::npos);
}

TEST(NoExpectedMatrix, AReportAgainstAFileNamesTheFileAlone) {
  const results::MatrixResult m = plain_matrix();
  for (const std::string& report : {render_text(m, TextOptions{}), render_markdown(m), render_html(m)})
    EXPECT_EQ(report.find("there is no"), std::string::npos);
}

}  // namespace
}  // namespace twice::reports
