// The terminal report: it names the expected matrix the run was compared
// with, and a path from the command line reaches the terminal only after its
// control characters were made visible.
#include "reports/text_report.h"

#include <gtest/gtest.h>

#include "external_tool.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

TEST(TextReport, NamesTheExpectedMatrixItWasComparedWith) {
  const std::string text = render_text(hostile_matrix(), TextOptions{});
  EXPECT_NE(text.find("2 cells differ from " + kExpectedPath + ":\n"), std::string::npos) << text;
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

}  // namespace
}  // namespace twice::reports
