// `twice run` and its report options, end to end on one small scenario: the
// full matrix leaves twice-report/ unasked, a narrowed run only when asked,
// and what it writes is read back by the real consumers.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "external_tool.h"

namespace twice::reports {
namespace {

using namespace testing;

// A folder holding one bundled scenario and no expected.toml, so the "full
// matrix" is every handler against that scenario under a few seeds.
struct SmallMatrix {
  ScratchDir dir;
  SmallMatrix() {
    std::filesystem::create_directories(dir / "scenarios");
    std::filesystem::copy_file(std::filesystem::path(TWICE_SOURCE_DIR) / "scenarios" / "concurrent-duplicates.toml",
                               dir / "scenarios" / "concurrent-duplicates.toml");
  }
  CommandResult twice(const std::string& args) const {
    return run_command("cd " + shell_quote(dir.path().string()) + " && " + shell_quote(TWICE_BINARY) +
                       " run --scenarios-dir scenarios --seeds 3 --shrink-budget 50 " + args + " 2>&1 >/dev/null");
  }
};

TEST(CliReports, FullMatrixWritesEveryFormatIntoTwiceReport) {
  SmallMatrix m;
  const auto r = m.twice("");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  EXPECT_NE(r.output.find("wrote twice-report/ (md, json, junit.xml, html)"), std::string::npos)
      << r.output;
  const auto json = nlohmann::json::parse(read_file(m.dir / "twice-report" / "twice-report.json"));
  EXPECT_EQ(json["scenarios"], nlohmann::json({"concurrent-duplicates"}));
  ASSERT_GT(json["cells"].size(), 1u);
  EXPECT_TRUE(json["cells"][0].contains("statistics"));

  if (!find_program("python3").empty()) {
    const auto junit = run_command("python3 " + shell_quote((test_source_dir() / "read_junit.py").string()) + " " +
                                   shell_quote((m.dir / "twice-report" / "twice-report.junit.xml").string()));
    ASSERT_EQ(junit.exit_code, 0) << junit.output;
    EXPECT_EQ(nlohmann::json::parse(junit.output)["attrib"]["tests"], std::to_string(json["cells"].size()));
  }
  if (const std::string xmllint = find_program("xmllint"); !xmllint.empty()) {
    const auto valid = run_command(shell_quote(xmllint) + " --noout --schema " +
                                   shell_quote((test_source_dir() / "junit.xsd").string()) + " " +
                                   shell_quote((m.dir / "twice-report" / "twice-report.junit.xml").string()) + " 2>&1");
    EXPECT_EQ(valid.exit_code, 0) << valid.output;
  }
}

TEST(CliReports, QuietRunWritesReportsWithoutSayingSo) {
  SmallMatrix m;
  const auto r = m.twice("-q --format html");
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(m.dir / "twice-report" / "twice-report.html"));
  EXPECT_FALSE(std::filesystem::exists(m.dir / "twice-report" / "twice-report.md"));
}

TEST(CliReports, NarrowedRunWritesReportsOnlyWhenAsked) {
  SmallMatrix m;
  auto r = m.twice("--handler check-then-act --scenario concurrent-duplicates");
  EXPECT_NE(r.exit_code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(m.dir / "twice-report"));

  r = m.twice("--handler check-then-act --scenario concurrent-duplicates --report-dir out --format md,junit");
  EXPECT_NE(r.output.find("wrote out/ (md, junit.xml)"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(m.dir / "out" / "twice-report.junit.xml"));
  EXPECT_FALSE(std::filesystem::exists(m.dir / "out" / "twice-report.html"));
}

// The text of each swimlane box of an HTML report, its lines joined with
// spaces and its entities decoded: what a reader sees, not the tooltip.
std::vector<std::string> swimlane_boxes(const std::string& html) {
  std::vector<std::string> boxes;
  const std::string open = "class=\"box\">";
  for (auto at = html.find(open); at != std::string::npos; at = html.find(open, at)) {
    at += open.size();
    const auto end = html.find("</text>", at);
    std::string text, raw = html.substr(at, end - at);
    bool in_tag = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const char c = raw[i];
      if (c == '<') {
        in_tag = true;
        if (raw.compare(i, 7, "<tspan ") == 0 && !text.empty()) text += ' ';
      } else if (c == '>') {
        in_tag = false;
      } else if (!in_tag) {
        text += c;
      }
    }
    for (const auto& [entity, plain] : {std::pair<std::string, std::string>{"&#39;", "'"}, {"&quot;", "\""},
                                        {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}})
      for (auto e = text.find(entity); e != std::string::npos; e = text.find(entity, e)) text.replace(e, entity.size(), plain);
    boxes.push_back(text);
  }
  return boxes;
}

// A real counterexample's swimlanes: the box of the SELECT that decided shows
// the status it read in full (the boxes were cut at one line, and
// "... amou…" hid status='WAIT_PAY'), and no box is cut.
TEST(CliReports, HtmlSwimlaneBoxesShowTheDecidingValuesInFull) {
  SmallMatrix m;
  // Enough seeds for check-then-act's double credit (SmallMatrix runs 3).
  const auto r = run_command("cd " + shell_quote(m.dir.path().string()) + " && " + shell_quote(TWICE_BINARY) +
                             " run --scenarios-dir scenarios --seeds 30 --handler check-then-act --format html "
                             "--report-dir out 2>&1 >/dev/null");
  ASSERT_NE(r.exit_code, 2) << r.output;
  const std::vector<std::string> boxes = swimlane_boxes(read_file(m.dir / "out" / "twice-report.html"));
  ASSERT_FALSE(boxes.empty());
  bool read_wait_pay = false;
  for (const auto& box : boxes) {
    EXPECT_EQ(box.find("\u2026"), std::string::npos) << box;
    if (box.starts_with("SELECT orders") && box.find("status='WAIT_PAY'") != std::string::npos) read_wait_pay = true;
  }
  EXPECT_TRUE(read_wait_pay) << "no SELECT orders box shows status='WAIT_PAY'; the first box: " << boxes.front();
}

TEST(CliReports, NoReportWritesNothingEvenForTheFullMatrix) {
  SmallMatrix m;
  const auto r = m.twice("--no-report --json r.json");
  EXPECT_NE(r.exit_code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(m.dir / "twice-report"));
  EXPECT_TRUE(std::filesystem::exists(m.dir / "r.json"));  // --json still works
}

TEST(CliReports, RejectsUnknownFormatsAndConflictingOptions) {
  SmallMatrix m;
  auto r = m.twice("--format md,pdf");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("pdf"), std::string::npos) << r.output;
  r = m.twice("--no-report --report-dir x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(std::filesystem::exists(m.dir / "twice-report"));
  EXPECT_FALSE(std::filesystem::exists(m.dir / "x"));
}

TEST(CliReports, ReportsNameTheExpectedMatrixReadRelativeToTheCurrentDirectory) {
  SmallMatrix m;
  write_file(m.dir / "scenarios" / "expected.toml", "[\"cas\"]\nconcurrent-duplicates = \"pass\"\n");
  // The path the JSON report gives for the expected matrix of a run in m.dir.
  const auto expected_path = [&](const std::string& args) -> std::string {
    std::filesystem::remove(m.dir / "r.json");
    const auto r = run_command("cd " + shell_quote(m.dir.path().string()) + " && " + shell_quote(TWICE_BINARY) +
                               " run --handler cas --scenario concurrent-duplicates --seeds 3 --no-report" +
                               " --json r.json " + args + " 2>&1 >/dev/null");
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.output;
    if (r.exit_code != 0) return "(failed)";
    return nlohmann::json::parse(read_file(m.dir / "r.json"))["expected_path"];
  };
  // However the folder is given, a file under the current directory is shown relative to it.
  for (const std::string& dir :
       {std::string("scenarios"), std::string("./scenarios/../scenarios"), (m.dir / "scenarios").string()})
    EXPECT_EQ(expected_path("--scenarios-dir " + shell_quote(dir)), "scenarios/expected.toml") << dir;
  // --expected names the file itself; outside the current directory it stays absolute.
  ScratchDir elsewhere;
  write_file(elsewhere / "mine.toml", "[\"cas\"]\nconcurrent-duplicates = \"pass\"\n");
  const std::string mine = (elsewhere / "mine.toml").string();
  EXPECT_EQ(expected_path("--scenarios-dir scenarios --expected " + shell_quote(mine)), mine);
  // No expected file: the path looked for, every cell expected to pass as before.
  std::filesystem::remove(m.dir / "scenarios" / "expected.toml");
  EXPECT_EQ(expected_path("--scenarios-dir scenarios"), "scenarios/expected.toml");
}

TEST(CliReports, AFolderThatCannotBeCreatedIsAUsageError) {
  SmallMatrix m;
  write_file(m.dir / "blocker", "a file, not a folder");
  const auto r = m.twice("--report-dir blocker/sub");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot create the report folder"), std::string::npos) << r.output;
}

TEST(CliReports, AFolderThatCannotBeWrittenFailsBeforeTheRun) {
  SmallMatrix m;
  // sysfs refuses new files even to root; a permission bit would not stop CI's root.
  for (const std::string& args : {std::string("--report-dir /sys/kernel"), std::string("--json /sys/kernel/r.json"),
                                  std::string("--json /proc/no-such-folder/r.json")}) {
    const auto r = run_command("cd " + shell_quote(m.dir.path().string()) + " && " + shell_quote(TWICE_BINARY) +
                               " run --scenarios-dir scenarios --seeds 3 -q " + args + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("twice: /"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("seeds per cell"), std::string::npos) << "the matrix ran first: " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  }
}

TEST(CliReports, ReplayCommandsAreShellQuotedAndRunAsPrinted) {
  SmallMatrix m;
  // A scenario path a shell would expand, split and unquote.
  const std::filesystem::path odd = m.dir / "$(touch pwned)" / "it's dup.toml";
  std::filesystem::create_directories(odd.parent_path());
  std::filesystem::copy_file(m.dir / "scenarios" / "concurrent-duplicates.toml", odd);
  const auto r = run_command("cd " + shell_quote(m.dir.path().string()) + " && " + shell_quote(TWICE_BINARY) +
                             " run --handler check-then-act --seeds 30 --no-report -q --json r.json --scenario " +
                             shell_quote(odd.string()) + " 2>&1");
  const auto j = nlohmann::json::parse(read_file(m.dir / "r.json"));
  const std::string replay = j["cells"][0]["violations"][0]["counterexample"]["replay"];
  EXPECT_NE(replay.find("'\\''s dup.toml'"), std::string::npos) << replay;
  // Pasted into a shell (with `twice` standing for the binary), it replays that scenario and runs nothing else.
  const auto pasted = run_command("cd " + shell_quote(m.dir.path().string()) + " && twice() { " +
                                  shell_quote(TWICE_BINARY) + " \"$@\"; } && " + replay + " 2>&1");
  EXPECT_EQ(pasted.exit_code, 1) << replay << ": " << pasted.output;  // 1: the replayed run shows a violation
  EXPECT_NE(pasted.output.find("# verdict: double_credit"), std::string::npos) << pasted.output;
  EXPECT_FALSE(std::filesystem::exists(m.dir / "pwned"));
}

}  // namespace
}  // namespace twice::reports
