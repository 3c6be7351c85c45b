// The reports of an exhaustive run (--strategy exhaustive, --prove): no
// seed-mode artefact (a seed count, a seed of 0, an interval or a median over
// schedules a depth-first search enumerated), and in every format what the
// search proved. The JSON keeps its fields and their types (schema version 1).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "reports/cell_verdict.h"
#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"
#include "reports/markdown_report.h"
#include "reports/text_report.h"
#include "report_fixture.h"

namespace twice::reports {
namespace {

using namespace testing;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string all_formats(const results::MatrixResult& m) {
  TextOptions text;
  text.show_all = true;
  return render_text(m, text) + render_markdown(m) + render_html(m) + render_junit(m);
}

TEST(ExhaustiveReports, NoFormatShowsASeedItDidNotRead) {
  const std::string random = all_formats(plain_matrix());
  ASSERT_TRUE(has(random, "(seed ")) << "the seeded run's reports name seeds";
  ASSERT_TRUE(has(random, "seeds per cell"));
  ASSERT_TRUE(has(random, "<property name=\"seeds\" value=\"200\"/>"));
  const results::MatrixResult m = exhaustive_matrix();
  const std::string out = all_formats(m);
  for (const char* artefact : {"(seed ", "seeds per cell", "base seed", "property name=\"seeds\"",
                               "property name=\"base_seed\"", "runs showed it", "same seeds"})
    EXPECT_FALSE(has(out, artefact)) << artefact;
  EXPECT_TRUE(has(render_markdown(m), "First seen in schedule **17**; **3 of 40** schedules showed it. The failing "
                                      "schedule with the fewest preemptions has **1**."));
  EXPECT_TRUE(has(render_html(m), "First seen in schedule <b>17</b>; <b>3 of 40</b> schedules showed it. The failing "
                                  "schedule with the fewest preemptions has <b>1</b>."));
  results::MatrixResult regression = m;  // the double credit not expected: the JUnit failure leads with it
  for (auto& c : regression.cells)
    if (!c.violations.empty()) {
      c.expected.clear();
      c.matched = false;
    }
  EXPECT_TRUE(has(render_junit(regression), "message=\"double_credit in 3/40 schedules: order O-2001 was credited 2 "
                                            "times for one payment of 12000 (first in schedule 17). expected pass, "
                                            "observed double_credit 3/40 (a regression). Replay: twice replay"))
      << render_junit(regression);
  EXPECT_FALSE(has(render_junit(regression), "(seed "));
  EXPECT_TRUE(has(render_markdown(m), "caught in k of n schedules, as expected"));
}

// A proved cell's "95% Wilson interval 0% – 8.8%" contradicted the proof,
// and a median gap between failures in a depth-first order estimates nothing.
TEST(ExhaustiveReports, NoIntervalOrMedianForTheSchedulesOfASearch) {
  const results::MatrixResult m = exhaustive_matrix();
  const std::string md = render_markdown(m);
  EXPECT_TRUE(has(md, "| cas | concurrent-duplicates | exhaustive(preemptions&#60;=2, faults&#60;=1) | 0/40 | 0% | — | — | — |"))
      << md;
  EXPECT_TRUE(has(md, "| check-then-act | concurrent-duplicates | exhaustive(preemptions&#60;=2, faults&#60;=1) | 3/40 | 7.50% "
                      "| — | 17 | — |"))
      << md;
  EXPECT_TRUE(has(md, "it has no interval and no median"));
  const std::string html = render_html(m);
  EXPECT_FALSE(has(html, "class=\"interval\"")) << "no interval bar";
  EXPECT_FALSE(has(html, "l5 6 l-5 6")) << "no median diamond in the chart";
  EXPECT_FALSE(has(html, "· median")) << "nor beside its bar";
  EXPECT_FALSE(has(html, "schedules between failures")) << "nor in its tooltip";
  EXPECT_TRUE(has(html, "<td>3/40</td><td>7.50%</td><td class=\"muted\">—</td><td class=\"name\"></td><td>17</td>"
                        "<td>—</td>"))
      << html;
  EXPECT_TRUE(has(html, "first 17</text>"));
  const std::string junit = render_junit(m);
  EXPECT_FALSE(has(junit, "Wilson")) << junit;
  EXPECT_FALSE(has(junit, "median")) << junit;
  EXPECT_TRUE(has(junit, "proved: all 40 schedules (after sleep-sets reduction, of 52 runs) up to 2 preemptions and 1 "
                         "fault hold"))
      << junit;
  // The seeded run keeps them.
  EXPECT_TRUE(has(render_markdown(plain_matrix()), "| 3/200 | 1.50% | 0.51% – 4.32% | 5 | 5 |"));
  EXPECT_TRUE(has(render_junit(plain_matrix()), "95% Wilson interval"));
}

// The HTML report told a proved cell from one whose budget ran out by
// nothing at all: each cell's search is in the matrix and its own section.
TEST(ExhaustiveReports, TheHtmlReportSaysWhatEachSearchProved) {
  const std::string html = render_html(exhaustive_matrix());
  EXPECT_TRUE(has(html, "<a href=\"#exhaustive\">Exhaustive search</a>"));
  EXPECT_TRUE(has(html, "<section id=\"exhaustive\"><h2>Exhaustive search</h2>"));
  EXPECT_TRUE(has(html, "<span class=\"mono\">cas × concurrent-duplicates</span>: proved: all 40 schedules (after "
                        "sleep-sets reduction, of 52 runs) up to 2 preemptions and 1 fault hold</li>"))
      << html;
  EXPECT_TRUE(has(html, "<span class=\"mono\">cas × sequential-duplicates</span>: explored 40 schedules of about 81000 "
                        "(after sleep-sets reduction, of 52 runs) up to 2 preemptions and 1 fault: none failed so far, "
                        "nothing proved</li>"))
      << html;
  EXPECT_TRUE(has(html, "searched all 40 schedules (after sleep-sets reduction, of 52 runs) up to 2 preemptions and 1 "
                        "fault: double_credit in 3"));
  EXPECT_TRUE(has(html, "pass<small>0/40</small><small>proved</small>"));
  EXPECT_TRUE(has(html, "pass<small>0/40</small><small>budget ran out: nothing proved</small>"));
  EXPECT_TRUE(has(html, "<p class=\"muted\">strategy <code>exhaustive(preemptions&lt;=2, faults&lt;=1)</code> · 2 "
                        "handlers × 2 scenarios</p>"));
  EXPECT_FALSE(has(render_html(plain_matrix()), "Exhaustive search"));
}

// "expected pass, proved up to 2 preemptions and 2 faults; not proved: ..."
// read as if the cell had been proved.
TEST(ExhaustiveReports, ANotProvedCellSaysWhatWasRequired) {
  const results::MatrixResult m = exhaustive_matrix();
  const results::CellResult* c = m.cell("check-then-act", "sequential-duplicates");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(verdict_of(c), CellVerdict::kNotProved);
  const std::string sentence =
      "expected pass, required: proved up to 2 preemptions and 2 faults; not proved: a search up to 2 preemptions and "
      "1 fault, narrower than required (run with --preemption-bound 2 --max-faults 2)";
  EXPECT_EQ(mismatch_sentence(*c), sentence);
  TextOptions text;
  EXPECT_TRUE(has(render_text(m, text), sentence));
  EXPECT_TRUE(has(render_markdown(m), sentence));
  EXPECT_TRUE(has(render_junit(m), sentence));
  EXPECT_TRUE(has(render_html(m), sentence));
}

// Schema version 1 never changes a field's type: the seed fields stay
// integers and the statistics keep every field, as a random run writes them.
TEST(ExhaustiveReports, TheJsonKeepsEveryFieldAndItsType) {
  const nlohmann::json random = to_json(plain_matrix());
  const nlohmann::json exhaustive = to_json(exhaustive_matrix());
  EXPECT_EQ(exhaustive.at("seeds").type(), random.at("seeds").type());
  EXPECT_EQ(exhaustive.at("base_seed").type(), random.at("base_seed").type());
  const auto& cell = exhaustive.at("cells").at(2);
  ASSERT_EQ(cell.at("handler"), "check-then-act");
  const auto& seeded = random.at("cells").at(2);
  for (const auto& [key, value] : seeded.at("statistics").items())
    EXPECT_EQ(cell.at("statistics").at(key).type(), value.type()) << key;
  const auto& v = cell.at("violations").at(0);
  EXPECT_TRUE(v.at("seed").is_number_integer());
  EXPECT_EQ(v.at("seed").get<int>(), 0);
  EXPECT_TRUE(exhaustive.at("cells").at(0).at("exhaustive").at("proved").get<bool>());
}

}  // namespace
}  // namespace twice::reports
