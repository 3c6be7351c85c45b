// The test API of twice/testing.h, gtest.h and rapidcheck.h, used the way a
// user's suite uses it: handlers by registered name, options, scenario files,
// RapidCheck-generated runs. The reference handlers (impl/) are linked in.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "contains.h"
#include "twice/gtest.h"
#include "twice/rapidcheck.h"
#include "twice/testing.h"
#include "../unique_temp_dir.h"

namespace {

using twice::testing::Options;
using twice::testing::Report;
using twice::testing::contains;

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

Options only(std::string scenario, int seeds = 100) {
  Options o;
  o.bundled = false;
  o.scenarios = {std::move(scenario)};
  o.seeds = seeds;
  return o;
}

// The scenarios unique-key+cas is meant for (it has no signature check, no
// reconciler, no refunds: later bundled scenarios test those).
Options duplicates() {
  Options o;
  o.bundled = false;
  o.scenarios = {"sequential-duplicates", "concurrent-duplicates", "concurrent-topups"};
  o.seeds = 60;
  return o;
}

TEST(TestingApi, ACorrectHandlerPasses) { TWICE_EXPECT_EXACTLY_ONCE("unique-key+cas", duplicates()); }

TEST(TestingApi, SkipLeavesBundledScenariosOut) {
  Options o;
  EXPECT_TRUE(has(twice::testing::scenario_refs(o), "concurrent-topups"));
  o.skip = {"concurrent-topups"};
  EXPECT_FALSE(has(twice::testing::scenario_refs(o), "concurrent-topups"));
  EXPECT_TRUE(has(twice::testing::scenario_refs(o), "concurrent-duplicates"));
  // A name that is not bundled is a mistake, not a no-op.
  o.skip = {"concurrent-topup"};
  const Report r = twice::testing::check_exactly_once("cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "Options::skip names 'concurrent-topup', which is not a bundled scenario"))
      << r.message;
}

// A handler that ships nothing is not held to the bundled scenarios that
// require shipments, unless it says it causes them (Options::effects) or the
// test names one.
TEST(TestingApi, BundledEffectScenariosRunOnlyForHandlersThatCauseEffects) {
  Options o;
  o.seeds = 5;
  for (const auto& ref : twice::testing::scenario_refs(Options{}))
    if (ref != "warehouse-timeout" && ref != "concurrent-topups") o.skip.push_back(ref);
  const Report left_out = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_TRUE(left_out.passed) << left_out.message;
  o.effects = true;
  const Report held = twice::testing::check_exactly_once("unique-key+cas", o);
  EXPECT_FALSE(held.passed);
  EXPECT_TRUE(has(held.violations, "warehouse-timeout: lost_effect")) << held.message;
  EXPECT_TRUE(twice::testing::check_exactly_once("outbox", o).passed);
  o.effects = false;
  o.bundled = false;
  o.scenarios = {"warehouse-timeout"};
  EXPECT_FALSE(twice::testing::check_exactly_once("unique-key+cas", o).passed) << "named: it runs";
}

TEST(TestingApi, ARaceIsReportedWithItsCounterexampleSeedAndReplayCommand) {
  const Report r = twice::testing::check_exactly_once("check-then-act", only("concurrent-duplicates"));
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(has(r.violations, "concurrent-duplicates: double_credit")) << r.message;
  EXPECT_EQ(r.runs, 100);
  EXPECT_TRUE(contains(r.message, "check-then-act is not exactly-once")) << r.message;
  EXPECT_TRUE(contains(r.message, "shrunk to")) << r.message;
  EXPECT_TRUE(contains(r.message, "(seed ")) << r.message;
  EXPECT_TRUE(contains(r.message, "twice replay --handler check-then-act --scenario concurrent-duplicates --seed "))
      << r.message;
  // No plugin given: the message says how to make the command work.
  EXPECT_TRUE(contains(r.message, "--plugin path/to/libyours.so")) << r.message;
}

TEST(TestingApi, ThePluginGoesIntoTheReplayCommands) {
  Options o = only("concurrent-duplicates");
  o.plugin = "build/libmine.so";
  const Report r = twice::testing::check_exactly_once("check-then-act", o);
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "twice replay --plugin build/libmine.so --handler check-then-act")) << r.message;
  EXPECT_FALSE(contains(r.message, "path/to/libyours.so")) << r.message;
}

// A relative plugin path that names a file goes into the commands absolute,
// so that they work pasted in any folder, as a scenario's path does.
TEST(TestingApi, AnExistingRelativePluginGoesIntoTheReplayCommandsAbsolute) {
  const std::string name = "twice-testing-api-plugin-" + std::to_string(::getpid()) + ".so";
  std::ofstream(name) << "not loaded: only its path is printed\n";
  Options o = only("concurrent-duplicates");
  o.plugin = name;
  const Report r = twice::testing::check_exactly_once("check-then-act", o);
  std::filesystem::remove(name);
  ASSERT_FALSE(r.passed);
  const std::string absolute = (std::filesystem::current_path() / name).string();
  EXPECT_TRUE(contains(r.message, "twice replay --plugin " + absolute + " --handler check-then-act")) << r.message;
}

TEST(TestingApi, TheSameOptionsGiveTheSameReportOnAnyNumberOfJobs) {
  Options o = duplicates();
  o.seeds = 40;
  o.jobs = 1;
  const Report one = twice::testing::check_exactly_once("check-then-act", o);
  o.jobs = 3;
  const Report three = twice::testing::check_exactly_once("check-then-act", o);
  EXPECT_EQ(one.message, three.message);
}

TEST(TestingApi, AScenarioFileOfYourOwnIsNamedByItsPath) {
  const auto& dir = twice::testing::unique_temp_dir();
  const auto path = dir / "double-tap.toml";
  std::ofstream(path) << R"(description = "two copies at once"
[faults]
duplicate = 1.0
duplicate_delay = ["0ms", "0ms"]
[[orders]]
order_no = "O-7"
user = "dan"
amount = 700
)";
  Options o = only(path.string(), 50);
  const Report r = twice::testing::check_exactly_once("check-then-act", o);
  ASSERT_FALSE(r.passed) << r.message;
  EXPECT_TRUE(contains(r.message, "--scenario " + path.string() + " --seed")) << r.message;
  // A folder selects every scenario in it.
  o.scenarios = {dir.string()};
  EXPECT_EQ(twice::testing::scenario_refs(o), std::vector<std::string>{path.string()});
}

TEST(TestingApi, BadInputIsAFailedReportSayingWhatToFix) {
  Report r = twice::testing::check_exactly_once("no-such-handler");
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "no handler registered as 'no-such-handler'")) << r.message;

  r = twice::testing::check_exactly_once("cas", only("/nonexistent/x.toml"));
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "/nonexistent/x.toml: no such file")) << r.message;

  r = twice::testing::check_exactly_once("cas", only("no-such-bundled-scenario"));
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "scenario 'no-such-bundled-scenario'")) << r.message;

  Options o;
  o.strategy = "dfs";
  r = twice::testing::check_exactly_once("cas", o);
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.message, "Options::strategy")) << r.message;
}

TEST(TestingApi, TheBundledScenariosAreFoundWhereTheTargetSaysTheyAre) {
  const auto refs = twice::testing::scenario_refs();
  EXPECT_NE(std::find(refs.begin(), refs.end(), "concurrent-duplicates"), refs.end());
}

TEST(TestingApi, CheckRunShrinksOneFailingRun) {
  // The first of the first 200 seeds on which check-then-act double-credits.
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const Report r = twice::testing::check_run("check-then-act", {"concurrent-duplicates", seed});
    if (r.passed) continue;
    EXPECT_TRUE(has(r.violations, "concurrent-duplicates: double_credit")) << r.message;
    EXPECT_TRUE(contains(r.message, "shrunk to")) << r.message;
    EXPECT_TRUE(contains(r.message, "--seed " + std::to_string(seed))) << r.message;
    return;
  }
  FAIL() << "check-then-act never double-credited in 200 seeds";
}

// A regression test pinned to a seed (check_run) tests another run once its
// scenario file is edited: with the digest its replay command printed, it
// fails saying so instead of passing on another run.
TEST(TestingApi, CheckRunWithADigestFailsWhenTheScenarioFileChanged) {
  const auto path = twice::testing::unique_temp_dir() / "pinned.toml";
  const std::string text = "description = \"two copies at once\"\n[faults]\nduplicate = 1.0\n"
                           "duplicate_delay = [\"0ms\", \"0ms\"]\n[[orders]]\norder_no = \"O-7\"\nuser = \"dan\"\n";
  std::ofstream(path) << text << "amount = 700\n";
  const Report found = twice::testing::check_exactly_once("check-then-act", only(path.string(), 30));
  ASSERT_FALSE(found.passed) << found.message;
  const std::string key = "--scenario-digest ";
  const auto at = found.message.find(key);
  ASSERT_NE(at, std::string::npos) << found.message;
  const std::string digest = found.message.substr(at + key.size(), 8);
  const auto seed_at = found.message.find("--seed ");
  ASSERT_NE(seed_at, std::string::npos) << found.message;
  const std::uint64_t seed = std::stoull(found.message.substr(seed_at + 7));

  const twice::testing::Run pinned{path.string(), seed, digest};
  const Report same = twice::testing::check_run("check-then-act", pinned);
  EXPECT_FALSE(same.passed);
  EXPECT_FALSE(same.violations.empty()) << same.message;

  std::ofstream(path) << text << "amount = 701\n";
  const Report changed = twice::testing::check_run("check-then-act", pinned);
  EXPECT_FALSE(changed.passed);
  EXPECT_TRUE(changed.violations.empty()) << changed.message;
  EXPECT_EQ(changed.runs, 0) << "nothing may run on the changed file";
  EXPECT_TRUE(contains(changed.message, path.string() + ": not the scenario this command was printed for (its "
                                                        "digest is "))
      << changed.message;
  EXPECT_TRUE(contains(changed.message, "the command says " + digest + "): the file has changed since"))
      << changed.message;
  EXPECT_TRUE(contains(changed.message, "or clear Run::scenario_digest to replay this file as it is")) << changed.message;
  // Cleared, the edited file runs as it is: the same choices, the same race,
  // another amount.
  const Report anyway = twice::testing::check_run("check-then-act", {path.string(), seed});
  EXPECT_EQ(anyway.violations, same.violations) << anyway.message;
  EXPECT_EQ(anyway.runs, 1);

  const Report malformed = twice::testing::check_run("check-then-act", {path.string(), seed, "xyz"});
  EXPECT_FALSE(malformed.passed);
  EXPECT_TRUE(contains(malformed.message, "Run::scenario_digest 'xyz': want the eight hex digits")) << malformed.message;
}

// The RapidCheck way: RapidCheck picks scenario and seed; RC_PARAMS replays.
RC_GTEST_PROP(TestingApi, GeneratedRunsOfACorrectHandlerPass, ()) {
  twice::testing::rc_assert_exactly_once("unique-key+cas", *twice::testing::gen_run(duplicates()), duplicates());
}

}  // namespace
