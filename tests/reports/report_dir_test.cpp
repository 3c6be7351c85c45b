#include "reports/report_dir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "external_tool.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

TEST(ReportDir, WritesEveryFormatIntoANewFolder) {
  ScratchDir dir;
  const std::string out = (dir / "nested" / "twice-report").string();
  std::vector<std::string> written;
  EXPECT_TRUE(write_reports(plain_matrix(), out, {}, &written).ok());
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(written[0], out + "/twice-report.md");
  EXPECT_EQ(written[3], out + "/twice-report.html");
  for (const auto& name : {"twice-report.md", "twice-report.json", "twice-report.junit.xml", "twice-report.html"})
    EXPECT_GT(std::filesystem::file_size(std::filesystem::path(out) / name), 100u) << name;
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(out)) ++files;
  EXPECT_EQ(files, 4);
  const auto json = nlohmann::json::parse(read_file(std::filesystem::path(out) / "twice-report.json"));
  EXPECT_EQ(json["schema_version"], 1);
}

TEST(ReportDir, WritesTheHostileMatrixInEveryFormat) {
  // Invalid UTF-8 and control characters reach every writer, the JSON one included.
  ScratchDir dir;
  EXPECT_TRUE(write_reports(hostile_matrix(), dir.path().string(), {}).ok());
  const auto json = nlohmann::json::parse(read_file(dir / "twice-report.json"));
  EXPECT_EQ(json["cells"].size(), 4u);
  EXPECT_TRUE(json["interrupted"]);
}

TEST(ReportDir, WritesOnlyTheFormatsAsked) {
  ScratchDir dir;
  std::vector<std::string> written;
  EXPECT_TRUE(write_reports(plain_matrix(), dir.path().string(), {"junit", "md"}, &written).ok());
  EXPECT_EQ(written, (std::vector<std::string>{dir.path().string() + "/twice-report.md",
                                               dir.path().string() + "/twice-report.junit.xml"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "twice-report.html"));
}

// An earlier run's reports of other formats are removed: a red run's HTML
// beside this run's green Markdown read as this run's. Files twice does not
// name are left alone.
TEST(ReportDir, RemovesAnEarlierRunsReportsOfFormatsNotWrittenNow) {
  ScratchDir dir;
  write_file(dir / "twice-report.html", "<title>twice report: 3 cells differ</title>");
  write_file(dir / "twice-report.json", "{}");
  write_file(dir / "notes.txt", "mine");
  std::vector<std::string> written, removed;
  EXPECT_TRUE(write_reports(plain_matrix(), dir.path().string(), {"md"}, &written, &removed).ok());
  EXPECT_EQ(removed, (std::vector<std::string>{dir.path().string() + "/twice-report.json",
                                               dir.path().string() + "/twice-report.html"}));
  EXPECT_FALSE(std::filesystem::exists(dir / "twice-report.html"));
  EXPECT_FALSE(std::filesystem::exists(dir / "twice-report.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "twice-report.md"));
  EXPECT_EQ(read_file(dir / "notes.txt"), "mine");
}

TEST(ReportDir, RejectsAnUnknownFormatBeforeWritingAnything) {
  ScratchDir dir;
  const std::string err = write_reports(plain_matrix(), (dir / "r").string(), {"md", "pdf"}).message();
  EXPECT_NE(err.find("unknown report format 'pdf'"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir / "r"));
}

TEST(ReportDir, NamesTheFolderItCannotCreate) {
  ScratchDir dir;
  write_file(dir / "file", "x");
  const std::string err = write_reports(plain_matrix(), (dir / "file" / "sub").string(), {}).message();
  EXPECT_NE(err.find("cannot create the report folder"), std::string::npos) << err;
}

TEST(ReportDir, ReplacesAnOldReport) {
  ScratchDir dir;
  write_file(dir / "twice-report.md", "old");
  EXPECT_TRUE(write_reports(plain_matrix(), dir.path().string(), {"md"}).ok());
  EXPECT_TRUE(read_file(dir / "twice-report.md").starts_with("## twice"));
}

// One file that cannot be written (its path taken by a folder; a full disk)
// does not cost the run its other reports.
TEST(ReportDir, AFileThatCannotBeWrittenDoesNotStopTheOthers) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "twice-report.md");
  std::vector<std::string> written;
  const Status st = write_reports(plain_matrix(), dir.path().string(), {}, &written);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("twice-report.md"), std::string::npos) << st.message();
  EXPECT_EQ(written, (std::vector<std::string>{dir.path().string() + "/twice-report.json",
                                               dir.path().string() + "/twice-report.junit.xml",
                                               dir.path().string() + "/twice-report.html"}));
}

}  // namespace
}  // namespace twice::reports
