// The expected matrix's [proved."<handler>"] tables end to end: `twice run
// --prove` proves every listed cell of scenarios/expected.toml at its bounds
// (so CI notices a handler that stops being provable), a listed cell that is
// not proved differs in the terminal, the JSON, the Markdown and the JUnit
// report, and a malformed entry exits 2 naming its file and line.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unique_temp_dir.h"
#include "run_twice.h"

namespace {

namespace fs = std::filesystem;

using Output = twice::testing::CliOutput;

using twice::testing::twice;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A folder of its own under the binary's shared temporary folder.
fs::path folder(const std::string& name) {
  const fs::path dir = twice::testing::unique_temp_dir() / name;
  fs::create_directories(dir);
  return dir;
}

// The bundled expected matrix with `extra` appended.
std::string expected_with(const std::string& name, const std::string& extra) {
  const fs::path path = folder("proved-files") / name;
  std::ofstream(path) << read_file(fs::path(TWICE_SOURCE_DIR) / "scenarios/expected.toml") << "\n" << extra;
  return path.string();
}

constexpr const char* kSmall =
    "--scenario concurrent-duplicates --scenario sequential-duplicates --scenario concurrent-topups "
    "--scenario stripe-concurrent-events --scenario crash-mid-handler --scenario crash-after-commit "
    "--scenario mq-redelivery --scenario audit-trail --scenario no-idempotency-keys --scenario warehouse-timeout "
    "--scenario mail-delivers-twice";

// Every cell scenarios/expected.toml requires proved is proved by --prove at
// the bounds it lists. The handlers and scenarios named are those of the
// [proved] tables; the test counts the listed cells it saw, so a table added
// for another handler or scenario fails here until it is named above.
TEST(ProvedCli, EveryCellTheExpectedMatrixRequiresProvedIsProved) {
  const std::string json_path = (folder("proved-all") / "m.json").string();
  const auto o = twice(fmt::format("run --prove --handler unique-key+cas --handler select-for-update --handler three-layer "
                                   "--handler outbox --handler idempotency-key {} --no-report -q --json {}",
                                   kSmall, json_path));
  ASSERT_EQ(o.exit_code, 0) << o.out;
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  int required = 0;
  for (const auto& cell : j["cells"]) {
    if (!cell.contains("proof_required")) continue;
    ++required;
    const auto& r = cell["proof_required"];
    EXPECT_TRUE(r["proved"].get<bool>()) << cell.dump(2);
    EXPECT_EQ(cell["exhaustive"]["preemption_bound"], r["preemption_bound"]) << cell["handler"] << cell["scenario"];
    EXPECT_EQ(cell["exhaustive"]["max_faults"], r["max_faults"]) << cell["handler"] << cell["scenario"];
    // The cell's strategy names the bounds it was searched at, not the run's defaults.
    EXPECT_EQ(cell["strategy"], fmt::format("exhaustive(preemptions<={}, faults<={})", r["preemption_bound"].get<int>(),
                                            r["max_faults"].get<int>()));
    EXPECT_EQ(cell["verdict"], "pass");
  }
  EXPECT_TRUE(j["strategy"].get<std::string>().starts_with("exhaustive(each cell at the bounds expected.toml requires"))
      << j["strategy"];
  // Counted in scenarios/expected.toml's [proved] tables.
  std::size_t listed = 0;
  const std::string file = read_file(fs::path(TWICE_SOURCE_DIR) / "scenarios/expected.toml");
  const std::size_t start = file.find("[proved.");
  ASSERT_NE(start, std::string::npos);
  for (std::size_t at = file.find("preemption-bound =", start); at != std::string::npos;
       at = file.find("preemption-bound =", at + 1))
    ++listed;
  EXPECT_EQ(static_cast<std::size_t>(required), listed);
}

// A listed cell the run does not prove (here its budget runs out) differs
// from the expected matrix in every report, and twice exits 1.
TEST(ProvedCli, AListedCellNotProvedDiffersInEveryReport) {
  const fs::path dir = folder("proved-budget");
  const auto o = twice(fmt::format("run --prove --budget 30 --handler unique-key+cas --scenario concurrent-duplicates "
                                   "--report-dir {} --format md,json,junit",
                                   dir.string()));
  ASSERT_EQ(o.exit_code, 1) << o.out;
  EXPECT_NE(o.out.find("unique-key+cas × concurrent-duplicates: expected pass, required: proved up to 2 preemptions and 2 faults; "
                       "not proved: explored"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("the budget ran out"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(read_file(dir / "twice-report.json"));
  const auto& cell = j["cells"][0];
  EXPECT_EQ(cell["verdict"], "not_proved");
  EXPECT_FALSE(cell["matched"].get<bool>());
  EXPECT_FALSE(cell["proof_required"]["proved"].get<bool>());
  EXPECT_EQ(cell["proof_required"]["max_faults"].get<int>(), 2);
  EXPECT_FALSE(j["all_matched"].get<bool>());
  const std::string md = read_file(dir / "twice-report.md");
  EXPECT_NE(md.find("**not proved**"), std::string::npos) << md;
  const std::string junit = read_file(dir / "twice-report.junit.xml");
  EXPECT_NE(junit.find("type=\"not proved\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"concurrent-duplicates\""), std::string::npos);
}

// --prove with narrower bounds than required does not prove the cell; a
// plain exhaustive run with narrower bounds cannot speak to the proof, and
// is judged on its violations alone; wider bounds prove it too.
TEST(ProvedCli, NarrowerBoundsProveNothingUnderProveAndAreNotJudgedOtherwise) {
  const auto given = twice("run --prove --preemption-bound 1 --handler unique-key+cas --scenario sequential-duplicates "
                           "--no-report");
  EXPECT_EQ(given.exit_code, 1) << given.out;
  EXPECT_NE(given.out.find("narrower than required (run with --preemption-bound 2 --max-faults 2)"), std::string::npos)
      << given.out;
  const std::string json_path = (folder("proved-narrow") / "m.json").string();
  const auto narrow = twice("run --strategy exhaustive --preemption-bound 1 --handler unique-key+cas "
                            "--scenario sequential-duplicates --no-report -q --json " + json_path);
  EXPECT_EQ(narrow.exit_code, 0) << narrow.out;
  EXPECT_FALSE(nlohmann::json::parse(std::ifstream(json_path))["cells"][0].contains("proof_required"));
  const auto wide = twice("run --strategy exhaustive --preemption-bound 3 --max-faults 2 --handler unique-key+cas "
                          "--scenario sequential-duplicates --no-report -q --json " + json_path);
  EXPECT_EQ(wide.exit_code, 0) << wide.out;
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  EXPECT_TRUE(j["cells"][0]["proof_required"]["proved"].get<bool>()) << j.dump(2);
}

// A requirement at bound 0 is met by a handler that holds there; a
// requirement on a cell expected to show a violation is refused.
TEST(ProvedCli, ABoundZeroRequirementAndAContradictoryOne) {
  const std::string path = expected_with("bound-zero.toml", "[proved.\"check-then-act\"]\n"
                                                             "concurrent-topups = { preemption-bound = 0, max-faults = 0 }\n");
  const auto o = twice("run --prove --handler check-then-act --scenario concurrent-topups --no-report --expected " + path);
  EXPECT_EQ(o.exit_code, 0) << o.out;
  EXPECT_NE(o.out.find("proved: all"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("up to 0 preemptions and 0 faults hold"), std::string::npos) << o.out;
  const std::string bad = expected_with("contradiction.toml", "[proved.\"check-then-act\"]\n"
                                                               "concurrent-duplicates = { preemption-bound = 2, "
                                                               "max-faults = 1 }\n");
  const auto refused = twice("run --prove --handler check-then-act --scenario concurrent-duplicates --no-report "
                             "--expected " + bad);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("is required proved but expected to show ack_before_commit+double_credit"), std::string::npos) << refused.out;
}

TEST(ProvedCli, MalformedEntriesExitTwoNamingFileAndLine) {
  struct Case {
    std::string extra;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"[proved.\"no-such-handler\"]\nconcurrent-duplicates = { preemption-bound = 2, max-faults = 1 }\n",
       "unknown handler 'no-such-handler'"},
      {"[proved.\"cas\"]\nno-such-scenario = { preemption-bound = 2, max-faults = 1 }\n", "unknown scenario 'no-such-scenario'"},
      {"[proved.\"cas\"]\nconcurrent-duplicates = { preemption-bound = -1, max-faults = 1 }\n",
       "preemption-bound must be a whole number from 0 to 64 or \"none\""},
      {"[proved.\"cas\"]\nconcurrent-duplicates = { preemption-bound = \"two\", max-faults = 1 }\n",
       "preemption-bound must be"},
      {"[proved.\"cas\"]\nconcurrent-duplicates = { preemption-bound = 2 }\n", "max-faults is missing"},
      {"[proved.\"cas\"]\nconcurrent-duplicates = { preemption-bound = 2, max-faults = 1, budget = 5 }\n",
       "unknown field 'budget'"},
      {"[proved.\"cas\"]\nconcurrent-duplicates = \"pass\"\n", "must be a table"},
      {"[proved.\"cas\"]\n\"concurrent-duplicates@postgres/read-committed\" = { preemption-bound = 2, max-faults = 1 }\n",
       "only SQLite cells can be required proved"},
  };
  const std::string base = read_file(fs::path(TWICE_SOURCE_DIR) / "scenarios/expected.toml");
  // The bundled file, a blank line, then the table's header and its entry.
  const long header_line = std::count(base.begin(), base.end(), '\n') + 2;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string path = expected_with(fmt::format("bad-{}.toml", i), cases[i].extra);
    const auto o = twice("run --prove --handler cas --scenario sequential-duplicates --no-report --expected " + path);
    EXPECT_EQ(o.exit_code, 2) << cases[i].extra << o.out;
    EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << o.out;
    EXPECT_NE(o.out.find(cases[i].says), std::string::npos) << o.out;
    // The header names an unknown handler, the entry anything else.
    const bool named = o.out.find(fmt::format("{}:{}:", path, header_line)) != std::string::npos ||
                       o.out.find(fmt::format("{}:{}:", path, header_line + 1)) != std::string::npos;
    EXPECT_TRUE(named) << o.out;
  }
}

}  // namespace
