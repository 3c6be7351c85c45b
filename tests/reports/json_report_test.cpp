// The JSON report: the statistics fields added within schema version 1, and
// docs/report-schema.md kept honest (every field written is documented, and
// every documented field is written).
#include "reports/json_report.h"

#include <set>

#include <gtest/gtest.h>

#include "external_tool.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

// "cells[].statistics.wilson_95.low": every key path, arrays of objects as "[]".
void flatten(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out.insert(path);
    if (value.is_object()) flatten(value, path, out);
    if (value.is_array())
      for (const auto& element : value)
        if (element.is_object()) flatten(element, path + "[]", out);
  }
}

// The first-column `names` of the field tables in the schema document.
std::set<std::string> documented_fields() {
  const std::string doc = read_file(test_source_dir() / ".." / ".." / "docs" / "report-schema.md");
  std::set<std::string> out;
  std::size_t from = 0;
  while ((from = doc.find("\n| `", from)) != std::string::npos) {
    const std::size_t start = from + 4;
    const std::size_t end = doc.find('`', start);
    out.insert(doc.substr(start, end - start));
    from = end;
  }
  return out;
}

TEST(JsonReport, DocumentedFieldsAreExactlyTheFieldsWritten) {
  std::set<std::string> written;
  flatten(to_json(hostile_matrix()), "", written);
  // A field written only on an exhaustive cell the expected matrix requires proved.
  results::MatrixResult proved = plain_matrix();
  proved.cells[0].strategy = "exhaustive";
  proved.cells[0].proof_required = results::ProofRequirement{2, 2};
  // Fields written only under --strategy exhaustive, --coverage, or on a cell that did not finish.
  proved.cells[0].exhaustive = results::ExhaustiveVerdict{};
  for (auto& c : proved.cells)
    for (auto& v : c.violations) {
      v.counterexample.preemptions = 1;
      v.counterexample.found_at_bound = 1;
      // A long transcript's "cut" row (explore/transcript.h).
      v.counterexample.rows.push_back(results::TranscriptRow{0, "1.000s", "cut", "... 7 steps of T1 left out ...", "", false, 7});
    }
  proved.cells[1].distinct_schedules = 12;
  proved.cells[1].cut_short = true;
  proved.cells[1].processes_left = 1;
  proved.cells[1].failures.push_back(results::CellFailure{"exited: 0", "the process ... exited", "exploring", 3, 42, "twice replay ..."});
  flatten(to_json(proved), "", written);
  // A field written only when there was no expected matrix.
  results::MatrixResult without_expected = plain_matrix();
  without_expected.expected_found = false;
  flatten(to_json(without_expected), "", written);
  const std::set<std::string> documented = documented_fields();
  ASSERT_GT(documented.size(), 30u) << "docs/report-schema.md not found or not parsed";
  for (const auto& f : written) EXPECT_TRUE(documented.count(f)) << "written but not documented: " << f;
  for (const auto& f : documented) EXPECT_TRUE(written.count(f)) << "documented but not written: " << f;
}

TEST(JsonReport, NamesTheExpectedMatrixItWasComparedWith) {
  const nlohmann::json j = to_json(hostile_matrix());
  EXPECT_EQ(j["expected_path"], kExpectedPath);
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  EXPECT_NE(text.find(R"("expected_path":"/tmp/a<b>&\"c\"`d/expected.toml")"), std::string::npos) << text;
  EXPECT_EQ(text.find(kExpectedPath), std::string::npos);  // its quotes are escaped
  EXPECT_EQ(to_json(plain_matrix())["expected_path"], "scenarios/expected.toml");
}

TEST(JsonReport, CarriesStatisticsAndVerdicts) {
  const nlohmann::json j = to_json(hostile_matrix());
  EXPECT_EQ(j["schema_version"], 1);
  const auto& caught = j["cells"][0];
  EXPECT_EQ(caught["verdict"], "caught");
  EXPECT_EQ(caught["failing_run_indices"], nlohmann::json({5, 8, 20, 21, 60}));
  EXPECT_NEAR(caught["statistics"]["failure_rate"].get<double>(), 0.025, 1e-12);
  EXPECT_NEAR(caught["statistics"]["wilson_95"]["low"].get<double>(), 0.0107, 1e-4);
  EXPECT_EQ(caught["statistics"]["first_failure"], 5);
  EXPECT_EQ(caught["statistics"]["median_schedules_to_failure"], 5.0);  // gaps 5, 3, 12, 1, 39
  EXPECT_TRUE(caught["statistics"]["pct_lower_bound"].is_null());
  EXPECT_EQ(j["cells"][1]["verdict"], "pass");
  EXPECT_TRUE(j["cells"][1]["statistics"]["first_failure"].is_null());
  EXPECT_EQ(j["cells"][2]["verdict"], "canary_lost");
  const auto& regression = j["cells"][3];
  EXPECT_EQ(regression["verdict"], "regression");
  EXPECT_EQ(regression["statistics"]["pct_depth"], 3);
  EXPECT_DOUBLE_EQ(regression["statistics"]["pct_lower_bound"].get<double>(), 1.0 / 512);
}

}  // namespace
}  // namespace twice::reports
