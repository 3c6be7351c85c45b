// The JUnit report read back by real XML parsers: python3's xml.etree for the
// content a CI viewer shows, xmllint against the JUnit schema for the shape.
#include "reports/junit_report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "external_tool.h"
#include "report_fixture.h"
#include "reports/escape.h"

namespace twice::reports {
namespace {

using namespace testing;

// The XML with its CDATA sections cut out: their content is text by definition.
std::string outside_cdata(const std::string& xml) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t open = xml.find("<![CDATA["); open != std::string::npos; open = xml.find("<![CDATA[", from)) {
    out += xml.substr(from, open - from);
    const std::size_t close = xml.find("]]>", open);
    if (close == std::string::npos) return out + "<unterminated CDATA>";
    from = close + 3;
  }
  return out + xml.substr(from);
}

TEST(JunitReport, OneTestcasePerCellAndNoRawMarkup) {
  const std::string all = render_junit(hostile_matrix());
  const std::string xml = outside_cdata(all);
  EXPECT_TRUE(all.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"));
  EXPECT_EQ(count(xml, "<testcase "), 6);
  EXPECT_EQ(count(xml, "<testsuite "), 2);
  EXPECT_EQ(xml.find("<script"), std::string::npos);
  EXPECT_EQ(all.find('\x01'), std::string::npos);
  EXPECT_EQ(all.find('\xff'), std::string::npos);
}

TEST(JunitReport, NamesTheExpectedMatrixItWasComparedWithEscaped) {
  const std::string all = render_junit(hostile_matrix());
  EXPECT_EQ(count(all, "<property name=\"expected_path\" value=\"/tmp/a&lt;b&gt;&amp;&quot;c&quot;`d/expected.toml\"/>"),
            2)
      << all;
  // Outside CDATA (whose content is text by definition) the path never appears as is.
  EXPECT_EQ(outside_cdata(all).find(kExpectedPath), std::string::npos);
  EXPECT_EQ(all.find("scenarios/expected.toml"), std::string::npos);
  EXPECT_NE(render_junit(plain_matrix()).find("<property name=\"expected_path\" value=\"scenarios/expected.toml\"/>"),
            std::string::npos);
}

nlohmann::json read_back(const std::string& xml) {
  ScratchDir dir;
  write_file(dir / "r.junit.xml", xml);
  const auto r = run_command("python3 " + shell_quote((test_source_dir() / "read_junit.py").string()) + " " +
                             shell_quote((dir / "r.junit.xml").string()) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(r.output) : nlohmann::json{};
}

TEST(JunitReport, PythonParsesItAndGetsThePayloadBackIntact) {
  if (find_program("python3").empty()) GTEST_SKIP() << "python3 not installed (Debian package python3)";
  const auto m = hostile_matrix();
  const nlohmann::json doc = read_back(render_junit(m));
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["root"], "testsuites");
  EXPECT_EQ(doc["attrib"]["tests"], "6");
  EXPECT_EQ(doc["attrib"]["failures"], "2");
  EXPECT_EQ(doc["attrib"]["skipped"], "2");
  ASSERT_EQ(doc["suites"].size(), 2u);
  EXPECT_EQ(doc["suites"][1]["attrib"]["name"], m.handlers[1]);  // the markup survives as text
  EXPECT_EQ(doc["suites"][0]["properties"]["strategy"], "random");
  EXPECT_EQ(doc["suites"][0]["properties"]["expected_path"], kExpectedPath);

  const auto& cases = doc["suites"][0]["cases"];
  ASSERT_EQ(cases.size(), 3u);
  // A cell that differs from the expected matrix comes first in its suite:
  // the lost canary fails.
  EXPECT_EQ(cases[0]["failure_type"], "canary lost");
  const std::string lost = cases[0]["failure_text"];
  EXPECT_NE(lost.find("Either the handler was fixed (update " + kExpectedPath + ")"), std::string::npos) << lost;
  // The canary caught as expected passes, its violation in system-out.
  EXPECT_EQ(cases[1]["classname"], "check-then-act");
  EXPECT_EQ(cases[1]["name"], "concurrent-duplicates");
  EXPECT_TRUE(cases[1]["failure_message"].is_null());
  const std::string out = cases[1]["system_out"];
  EXPECT_NE(out.find("known bug caught as expected: double_credit 5/200"), std::string::npos) << out;
  EXPECT_NE(out.find("--seed 5787478153334856"), std::string::npos);
  // The scenario name, newline included, comes back exactly.
  EXPECT_EQ(cases[2]["name"], m.scenarios[1]);

  // The regression: message and body carry the payload, the seed and the
  // replay command, decoded to exactly the text (after the control character
  // and the stray byte were made visible).
  const auto& bad = doc["suites"][1]["cases"][0];
  EXPECT_EQ(bad["failure_type"], "regression");
  const std::string message = bad["failure_message"];
  EXPECT_NE(message.find("seed 5787478153334856"), std::string::npos) << message;
  EXPECT_NE(message.find("Replay: twice replay"), std::string::npos);
  const std::string payload = printable_utf8(kPayload);
  EXPECT_NE(message.find(payload), std::string::npos) << message;
  const std::string body = bad["failure_text"];
  EXPECT_NE(body.find("balance went missing: " + payload.substr(0, payload.find('\n'))), std::string::npos) << body;
  EXPECT_NE(body.find("]]>"), std::string::npos);
  EXPECT_NE(body.find("<script>alert(1)</script>"), std::string::npos);  // as text, for a person to read
  EXPECT_TRUE(doc["suites"][1]["cases"][1]["skipped"]);
}

TEST(JunitReport, FailureMessageLeadsWithTheDominatingViolationAndCasesCarryTheirTime) {
  if (find_program("python3").empty()) GTEST_SKIP() << "python3 not installed (Debian package python3)";
  results::MatrixResult m = plain_matrix();
  for (auto& c : m.cells) c.seconds = 0.5;
  results::CellResult& c = m.cells[2];  // check-then-act × concurrent-duplicates
  ASSERT_EQ(c.handler, "check-then-act");
  c.seconds = 1.25;
  c.expected.clear();
  c.matched = false;
  results::ViolationResult rare = c.violations.front();
  rare.invariant = "ack_before_commit";  // first by alphabet, seen in 1 run of 200
  rare.failures = 1;
  c.violations.front().failures = 30;
  c.violations.insert(c.violations.begin(), rare);
  const nlohmann::json doc = read_back(render_junit(m));
  ASSERT_FALSE(doc.is_null());
  // The suite with the cell that differs comes first (check-then-act is the
  // matrix's second handler), and that cell first in it.
  const auto& cas = doc["suites"][0]["cases"][0];
  ASSERT_EQ(cas["classname"], "check-then-act");
  const std::string message = cas["failure_message"];
  EXPECT_TRUE(message.starts_with("double_credit in 30/200 runs: order O-2001 was credited 2 times")) << message;
  EXPECT_EQ(cas["time"], "1.250");
  EXPECT_EQ(doc["suites"][0]["attrib"]["time"], "1.750");
  EXPECT_EQ(doc["attrib"]["time"], "2.750");
}

// A cell that shows a new violation beside its expected one: the failure
// leads with the new one (fewer runs showed it), and its replay shows that one.
TEST(JunitReport, AMismatchLeadsWithTheViolationThatIsNotExpected) {
  if (find_program("python3").empty()) GTEST_SKIP() << "python3 not installed (Debian package python3)";
  const nlohmann::json doc = read_back(render_junit(mismatch_matrix()));
  ASSERT_FALSE(doc.is_null());
  const auto& cas = doc["suites"][0]["cases"][0];
  ASSERT_EQ(cas["classname"], "check-then-act");
  const std::string message = cas["failure_message"];
  EXPECT_TRUE(message.starts_with("payload_missing in 2/200 runs: order O-2001 was credited but its callback payload "
                                  "was not stored (seed 222)."))
      << message;
  EXPECT_NE(message.find("(not expected: payload_missing)"), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with("Replay: twice replay --handler check-then-act --scenario concurrent-duplicates --seed "
                                "222 --shrunk --invariant payload_missing"))
      << message;
}

TEST(JunitReport, ValidatesAgainstTheJunitSchema) {
  const std::string xmllint = find_program("xmllint");
  if (xmllint.empty()) GTEST_SKIP() << "xmllint not installed (Debian package libxml2-utils)";
  ScratchDir dir;
  for (const auto& [name, m] : {std::pair{"hostile", hostile_matrix()}, std::pair{"plain", plain_matrix()}}) {
    const auto path = dir / (std::string(name) + ".junit.xml");
    write_file(path, render_junit(m));
    const auto r = run_command(shell_quote(xmllint) + " --noout --schema " +
                               shell_quote((test_source_dir() / "junit.xsd").string()) + " " +
                               shell_quote(path.string()) + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.output;
  }
  // A control: the schema rejects a testcase without a classname.
  write_file(dir / "bad.xml", "<testsuites tests=\"1\" failures=\"0\"><testsuite name=\"x\" tests=\"1\" failures=\"0\" "
                              "errors=\"0\"><testcase name=\"y\"/></testsuite></testsuites>");
  const auto control = run_command(shell_quote(xmllint) + " --noout --schema " +
                                   shell_quote((test_source_dir() / "junit.xsd").string()) + " " +
                                   shell_quote((dir / "bad.xml").string()) + " 2>&1");
  EXPECT_NE(control.exit_code, 0) << control.output;
}

}  // namespace
}  // namespace twice::reports
