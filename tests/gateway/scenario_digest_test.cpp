// A scenario's digest (the --scenario-digest of its replay commands): the
// same for every spelling of the same values, different when a value, key or
// entry changes, and set by load_scenario() on each bundled scenario.
#include "gateway/scenario_digest.h"

#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "../unique_temp_dir.h"
#include "gateway/scenario.h"

namespace twice::gateway {
namespace {

std::string digest_of(std::string_view text) { return scenario_digest(toml::parse(text)); }

constexpr std::string_view kScenario = R"(description = "two copies at once"
profile = "wechat-v3"

[network]
latency = ["10ms", "100ms"]

[faults]
duplicate = 0.5

[[orders]]
order_no = "O-1"
user = "alice"
amount = 12000

[[orders]]
order_no = "O-2"
user = "bob"
amount = 500
)";

TEST(ScenarioDigest, IsEightHexDigitsAndTheSameEachTime) {
  const std::string d = digest_of(kScenario);
  EXPECT_TRUE(is_scenario_digest(d)) << d;
  EXPECT_EQ(d, digest_of(kScenario));
}

TEST(ScenarioDigest, CommentsSpacingKeyOrderAndNumberSpellingsDoNotCount) {
  // The same values: comments, blank lines, spaces, keys in another order, the
  // description as a literal string, 0.5 as 5e-1, [network] as an inline table.
  const std::string same = R"(# a comment
profile="wechat-v3"   # trailing
description = 'two copies at once'
network = { latency = [ "10ms" , "100ms" ] }
faults = { duplicate = 5e-1 }


[[orders]]
user = "alice"
order_no = "O-1"
amount = 12_000

[[orders]]
amount = 500
order_no = "O-2"
user = "bob"
)";
  EXPECT_EQ(digest_of(kScenario), digest_of(same));
}

TEST(ScenarioDigest, EveryValueKeyAndEntryCounts) {
  const std::string base = digest_of(kScenario);
  const auto changed = [&](std::string_view from, std::string_view to) {
    std::string text(kScenario);
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return digest_of(text);
  };
  std::set<std::string> seen = {base};
  for (const auto& [from, to] : std::vector<std::pair<std::string_view, std::string_view>>{
           {"amount = 12000", "amount = 12001"},           // a number
           {"\"100ms\"", "\"101ms\""},                     // a string in an array
           {"duplicate = 0.5", "duplicate = 0.25"},        // a float
           {"user = \"bob\"", "user = \"bob\"\npaid_at = \"1s\""},  // a key added
           {"\"10ms\", ", ""},                             // an array entry dropped
           {"amount = 500", "amount = \"500\""},           // the same digits, a string
           {"[[orders]]\norder_no = \"O-2\"", "[[orders]]\norder_no = \"O-2\"\n[[orders]]\norder_no = \"O-3\""},
       })
    EXPECT_TRUE(seen.insert(changed(from, to)).second) << "no new digest for " << from << " -> " << to;
  // The orders' order counts: the same two orders swapped are another scenario
  // (the gateway plays them in file order).
  std::string swapped(kScenario);
  const auto second = swapped.find("[[orders]]\norder_no = \"O-2\"");
  const std::string tail = swapped.substr(second);
  swapped.erase(second);
  swapped.insert(swapped.find("[[orders]]"), tail + "\n");
  EXPECT_NE(digest_of(swapped), base);
}

// audit: docs/scenarios.md said how a number is spelled does not count, but
// ack_loss = 1 and ack_loss = 1.0 give two digests, as do -0.0 and 0.0.
// Making them one would change four bundled scenarios' digests (they write
// probabilities as 1.0) and every replay command printed for them, so the
// docs say exactly what counts, and this pins both.
TEST(ScenarioDigest, AnIntegerAndAFloatAreTwoValuesAsTheDocsSay) {
  EXPECT_EQ(digest_of("[faults]\nack_loss = 1.0\n"), digest_of("[faults]\nack_loss = 1e0\n"));
  EXPECT_NE(digest_of("[faults]\nack_loss = 1\n"), digest_of("[faults]\nack_loss = 1.0\n"));
  EXPECT_NE(digest_of("[faults]\nack_loss = -0.0\n"), digest_of("[faults]\nack_loss = 0.0\n"));
  std::ifstream docs(TWICE_SOURCE_DIR "/docs/scenarios.md");
  const std::string text((std::istreambuf_iterator<char>(docs)), std::istreambuf_iterator<char>());
  for (const char* said : {"An integer and a floating-point number are two values", "`ack_loss = 1` and `ack_loss = 1.0`",
                           "`-0.0` and `0.0`"})
    EXPECT_NE(text.find(said), std::string::npos) << "docs/scenarios.md no longer says " << said;
}

TEST(ScenarioDigest, AStringCannotPassForAnotherByItsQuotes) {
  // Escaped quotes and backslashes are written escaped: these two differ.
  EXPECT_NE(digest_of(R"(a = "x\",\"y")"), digest_of(R"(a = ["x", "y"])"));
  EXPECT_NE(digest_of(R"(a = "x\\")"), digest_of(R"(a = "x")"));
}

TEST(ScenarioDigest, TellsWellFormedDigestsApart) {
  EXPECT_TRUE(is_scenario_digest("0123abcd"));
  EXPECT_FALSE(is_scenario_digest("0123ABCD"));
  EXPECT_FALSE(is_scenario_digest("0123abc"));
  EXPECT_FALSE(is_scenario_digest("0123abcde"));
  EXPECT_FALSE(is_scenario_digest("0123abcg"));
  EXPECT_FALSE(is_scenario_digest(""));
}

// audit: --scenario-digest 5CC0ECAE was refused as not eight hex digits. Hex
// has no case: a digest copied in capitals is the same digest.
TEST(ScenarioDigest, AGivenDigestInCapitalsIsTheSameDigest) {
  EXPECT_TRUE(check_scenario_digest("x.toml", "5cc0ecae", "5CC0ECAE", "--scenario-digest", "leave it out").ok());
  EXPECT_TRUE(check_scenario_digest("x.toml", "5cc0ecae", "5cC0EcaE", "--scenario-digest", "leave it out").ok());
  const Status other = check_scenario_digest("x.toml", "5cc0ecae", "66BA994F", "--scenario-digest", "leave it out");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("x.toml: not the scenario this command was printed for (its digest is 5cc0ecae now, "
                                 "the command says 66BA994F)"),
            std::string::npos)
      << other.message();
  const Status bad = check_scenario_digest("x.toml", "5cc0ecae", "5CC0ECAG", "--scenario-digest", "leave it out");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--scenario-digest '5CC0ECAG': want the eight hex digits"), std::string::npos)
      << bad.message();
}

TEST(ScenarioDigest, LoadingAFileSetsItAndEveryBundledScenarioHasItsOwn) {
  const auto path = twice::testing::unique_temp_dir() / "digest.toml";
  std::ofstream(path) << kScenario;
  StatusOr<Scenario> s = load_scenario(path.string());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->digest, digest_of(kScenario));

  StatusOr<std::vector<Scenario>> bundled = load_scenario_dir(TWICE_SOURCE_DIR "/scenarios");
  ASSERT_TRUE(bundled.ok()) << bundled.status().message();
  ASSERT_GT(bundled->size(), 10u);
  std::set<std::string> digests;
  for (const Scenario& b : *bundled) {
    EXPECT_TRUE(is_scenario_digest(b.digest)) << b.name << ": " << b.digest;
    EXPECT_TRUE(digests.insert(b.digest).second) << b.name << " shares its digest";
  }
}

}  // namespace
}  // namespace twice::gateway
