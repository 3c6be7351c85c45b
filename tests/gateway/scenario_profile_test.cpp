// A scenario's [gateway] table: the profile's timeout and retry intervals it
// sets, each error it refuses (file, line, key and fix), the profile a run
// then plays (profile_of) and what `twice list` says of it.
#include "gateway/scenario_profile.h"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "../unique_temp_dir.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario.h"
#include "twice/time.h"

namespace twice::gateway {
namespace {

constexpr const char* kAnOrder = "\n[[orders]]\norder_no = \"O-1\"\nuser = \"u\"\namount = 100\n";

class GatewayTable : public ::testing::Test {
 protected:
  // Loads "description = ...", `body`, then an order.
  StatusOr<Scenario> load(const std::string& body) {
    path_ = (twice::testing::unique_temp_dir() /
             (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".toml"))
                .string();
    std::ofstream(path_) << "description = \"d\"\n" << body << kAnOrder;
    return load_scenario(path_);
  }
  // The error loading it gives, without the path ("3: ..."); "" when it loaded.
  std::string error_of(const std::string& body) {
    StatusOr<Scenario> s = load(body);
    if (s.ok()) return "";
    const std::string& m = s.status().message();
    return m.starts_with(path_ + ":") ? m.substr(path_.size() + 1) : m;
  }
  std::string path_;
};

TEST_F(GatewayTable, SetsTheTimeoutAndTheRetryIntervalsTheRunPlays) {
  StatusOr<Scenario> s = load("profile = \"alipay\"\n[gateway]\ntimeout = \"3s\"\n"
                              "retry_intervals = [\"15s\", \"15s\", \"30s\", \"3m\", \"1h30m\", \"250ms\"]\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->gateway.timeout, 3 * kSecond);
  const std::vector<Micros> waits = {15 * kSecond, 15 * kSecond, 30 * kSecond, 3 * kMinute, 90 * kMinute,
                                     250 * kMillisecond};
  EXPECT_EQ(s->gateway.retry_intervals, waits);
  const RetryProfile played = profile_of(*s).value();
  EXPECT_EQ(played.timeout, 3 * kSecond);
  EXPECT_EQ(played.retry_after, waits);
  // The rest is the profile's: its ack, its events.
  EXPECT_EQ(played.paid_event_type, "TRADE_SUCCESS");
  EXPECT_FALSE(played.is_ack(Reply{200, "ok"}));
  EXPECT_TRUE(played.is_ack(Reply{200, "success"}));
}

TEST_F(GatewayTable, WithoutItEveryProfilePlaysItsOwnFigures) {
  for (const RetryProfile& p : all_profiles()) {
    StatusOr<Scenario> s = load("profile = \"" + p.name + "\"\n");
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_FALSE(s->gateway.timeout);
    EXPECT_FALSE(s->gateway.retry_intervals);
    const RetryProfile played = profile_of(*s).value();
    EXPECT_EQ(played.timeout, p.timeout) << p.name;
    EXPECT_EQ(played.retry_after, p.retry_after) << p.name;
    EXPECT_EQ(gateway_departures(*s), "") << p.name;
  }
  Scenario unknown;
  unknown.profile = "wechat-v9";
  EXPECT_FALSE(profile_of(unknown));
}

TEST_F(GatewayTable, AnEmptyScheduleMeansOneAttempt) {
  StatusOr<Scenario> s = load("[gateway]\nretry_intervals = []\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(profile_of(*s)->retry_after.empty());
  EXPECT_EQ(error_of("[gateway]\nretry_intervals = []\n[faults]\nmax_attempts = 2\n"),
            "5: 'max_attempts' is 2, but [gateway] retry_intervals holds 0 waits, so at most 1 attempt; write "
            "max_attempts = 1 or less, or add waits to retry_intervals");
}

TEST_F(GatewayTable, EachMistakeIsOneLineNamingTheLineTheKeyAndTheFix) {
  struct Case {
    std::string body, error;
  };
  const std::string many = [] {
    std::string out = "[";
    for (int i = 0; i < 100; ++i) out += i ? ", \"1m\"" : "\"1m\"";
    return out + "]";
  }();
  for (const Case& c : std::vector<Case>{
           {"[gateway]\ntimeuot = \"3s\"\n", "3: unknown key 'timeuot' in [gateway]; allowed: timeout, retry_intervals"},
           {"[gateway]\ntimeout = \"3 s\"\n",
            "3: 'timeout' is \"3 s\", not a duration; write e.g. \"250ms\", \"15s\", \"3m\", \"1h30m\" (units from the "
            "largest down, each once)"},
           {"[gateway]\ntimeout = 3\n", "3: 'timeout' must be a string, got an integer"},
           {"[gateway]\ntimeout = \"0s\"\n",
            "3: 'timeout' must be longer than 0s: how long the gateway waits for an answer, e.g. \"5s\""},
           {"[gateway]\ntimeout = \"31d\"\n", "3: 'timeout' is \"31d\"; durations are at most 30d (docs/scenarios.md)"},
           {"[gateway]\nretry_intervals = \"15s\"\n",
            "3: 'retry_intervals' must be an array of durations, the waits between attempts, like [\"15s\", \"30s\", "
            "\"3m\"]"},
           {"[gateway]\nretry_intervals = [\"15s\",\n  \"0s\"]\n",
            "4: 'retry_intervals[1]' must be longer than 0s: the gateway waits before it retries"},
           {"[gateway]\nretry_intervals = [\"15s\", 30]\n", "3: 'retry_intervals[1]' must be a string, got an integer"},
           {"[gateway]\nretry_intervals = [\"15s\", \"half a minute\"]\n",
            "3: 'retry_intervals[1]' is \"half a minute\", not a duration; write e.g. \"250ms\", \"15s\", \"3m\", "
            "\"1h30m\" (units from the largest down, each once)"},
           {"[gateway]\nretry_intervals = " + many + "\n",
            "3: 'retry_intervals' holds 100 waits; at most 99 (100 attempts, the most max_attempts allows)"},
           {"[gateway]\nretry_intervals = [\"20d\", \"10d\", \"1s\"]\n",
            "3: 'retry_intervals' add up to 30d1s; a schedule spans at most 30d (Adyen's, the longest, retries for 30 "
            "days)"},
           {"gateway = \"3s\"\n", "2: 'gateway' must be a table: write [gateway]"},
           // The natural slips: the gateway's figures written where faults and the network go.
           {"[faults]\nack_loss = 0.1\ntimeout = \"3s\"\n",
            "4: 'timeout' belongs in [gateway], not [faults]: it is how long the gateway waits for an answer; write "
            "[gateway] then timeout = \"3s\""},
           {"[faults]\nretry_intervals = [\"1m\"]\n",
            "3: 'retry_intervals' belongs in [gateway], not [faults]: it is the gateway's waits between attempts; write "
            "[gateway] then retry_intervals = [\"15s\", \"30s\"]"},
           {"[network]\ntimeout = \"3s\"\n",
            "3: 'timeout' belongs in [gateway], not [network]: it is how long the gateway waits for an answer; write "
            "[gateway] then timeout = \"3s\""},
           {"timeout = \"3s\"\n",
            "2: 'timeout' belongs in [gateway], not the top level: it is how long the gateway waits for an answer; "
            "write [gateway] then timeout = \"3s\""},
       }) {
    EXPECT_EQ(error_of(c.body), c.error) << c.body;
  }
}

// max_attempts can only cut the schedule short, [gateway]'s as the profile's,
// wherever [faults] stands in the file.
TEST_F(GatewayTable, MaxAttemptsIsBoundByTheScheduleTheTableSets) {
  const std::string schedule = "[gateway]\nretry_intervals = [\"1m\", \"2m\"]\n";
  EXPECT_EQ(error_of(schedule + "[faults]\nmax_attempts = 4\n"),
            "5: 'max_attempts' is 4, but [gateway] retry_intervals holds 2 waits, so at most 3 attempts; write "
            "max_attempts = 3 or less, or add waits to retry_intervals");
  EXPECT_EQ(error_of("[faults]\nmax_attempts = 4\n" + schedule),
            "3: 'max_attempts' is 4, but [gateway] retry_intervals holds 2 waits, so at most 3 attempts; write "
            "max_attempts = 3 or less, or add waits to retry_intervals");
  EXPECT_EQ(error_of(schedule + "[faults]\nmax_attempts = 3\n"), "");
  // A longer schedule than the profile's allows more attempts than the profile's 16.
  std::string twenty = "[gateway]\nretry_intervals = [\"1m\"";
  for (int i = 1; i < 20; ++i) twenty += ", \"1m\"";
  EXPECT_EQ(error_of(twenty + "]\n[faults]\nmax_attempts = 21\n"), "");
  EXPECT_NE(error_of("[faults]\nmax_attempts = 21\n").find("profile 'wechat-v3' sends at most 16 attempts"),
            std::string::npos);
}

TEST_F(GatewayTable, ListSaysWhatDepartsFromThePublishedOrDefaultFigures) {
  StatusOr<Scenario> s = load("[gateway]\ntimeout = \"3s\"\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(gateway_departures(*s), "[gateway] timeout 3s instead of wechat-v3's published 5s");
  const PlayedGateway played = played_gateway(*s).value();
  EXPECT_TRUE(played.timeout.published);
  EXPECT_TRUE(played.timeout.departs);
  EXPECT_TRUE(played.retry_intervals.published);
  EXPECT_FALSE(played.retry_intervals.departs);

  s = load("profile = \"stripe\"\n[gateway]\ntimeout = \"15s\"\nretry_intervals = [\"1m\", \"5m\", \"1h\", \"2h\", "
           "\"6h\", \"12h\", \"1s500ms\"]\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(gateway_departures(*s),
            "[gateway] retry_intervals 1m, 5m, 1h, 2h, 6h, … (7 waits, 21h6m1s500ms in all) instead of stripe's "
            "unpublished default 1m, 2m, 4m, 8m, 16m, … (14 waits, 2d17h3m in all)")
      << "the timeout it sets is the default: no departure";
  EXPECT_FALSE(played_gateway(*s)->timeout.departs);
  EXPECT_FALSE(played_gateway(*s)->retry_intervals.published);

  s = load("profile = \"alipay\"\n[gateway]\ntimeout = \"3s\"\nretry_intervals = [\"4m\"]\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(gateway_departures(*s),
            "[gateway] timeout 3s instead of alipay's unpublished default 15s; retry_intervals 4m (1 wait, 4m in "
            "all) instead of alipay's published 4m, 10m, 10m, 1h, 2h, … (7 waits, 24h24m in all)");
}

// audit: `twice list` showed the whole schedule of a scenario whose [faults]
// max_attempts cuts it short (adyen-head-of-line: 99 waits for 5 attempts),
// and said it departed from nothing.
TEST_F(GatewayTable, ListSaysWhereMaxAttemptsCutsTheSchedule) {
  StatusOr<Scenario> s = load("profile = \"alipay\"\n[faults]\nmax_attempts = 3\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(gateway_departures(*s),
            "[faults] max_attempts 3 cuts alipay's published retry_intervals 4m, 10m, 10m, 1h, 2h, … (7 waits, 24h24m "
            "in all) to 4m, 10m (2 waits, 14m in all)");
  PlayedGateway played = played_gateway(*s).value();
  EXPECT_EQ(played.profile.retry_after, (std::vector<Micros>{4 * kMinute, 10 * kMinute}));
  EXPECT_TRUE(played.retry_intervals.published);
  EXPECT_TRUE(played.retry_intervals.departs);
  EXPECT_FALSE(played.timeout.departs);

  s = load("[gateway]\ntimeout = \"3s\"\nretry_intervals = [\"1m\", \"2m\", \"3m\"]\n[faults]\nmax_attempts = 2\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(gateway_departures(*s),
            "[gateway] timeout 3s instead of wechat-v3's published 5s; retry_intervals 1m, 2m, 3m (3 waits, 6m in all) "
            "instead of wechat-v3's published 15s, 15s, 30s, 3m, 10m, … (15 waits, 24h4m in all); [faults] "
            "max_attempts 2 cuts them to 1m (1 wait, 1m in all)");
  EXPECT_EQ(played_gateway(*s)->profile.retry_after, std::vector<Micros>{kMinute});

  // max_attempts = 1: no retry at all.
  s = load("profile = \"alipay\"\n[faults]\nmax_attempts = 1\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(gateway_departures(*s),
            "[faults] max_attempts 1 cuts alipay's published retry_intervals 4m, 10m, 10m, 1h, 2h, … (7 waits, 24h24m "
            "in all) to none (no retry)");
  // The whole schedule's attempts, or no max_attempts: nothing is cut.
  for (const char* body : {"profile = \"alipay\"\n[faults]\nmax_attempts = 8\n", "profile = \"alipay\"\n"}) {
    s = load(body);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(gateway_departures(*s), "") << body;
    EXPECT_FALSE(played_gateway(*s)->retry_intervals.departs) << body;
    EXPECT_EQ(played_gateway(*s)->profile.retry_after.size(), 7u) << body;
  }
}

TEST(ExactDuration, ReadsBackAsTheSameDuration) {
  for (const Micros d : {Micros{1}, 250 * kMillisecond, 1234 * kMillisecond, 15 * kSecond, 90 * kSecond,
                         24 * kHour, 24 * kHour + 4 * kMinute, 3 * 24 * kHour, 36 * kHour + 1, 30 * 24 * kHour + kSecond})
    EXPECT_EQ(parse_duration(exact_duration(d)), d) << exact_duration(d);
  EXPECT_EQ(exact_duration(1234 * kMillisecond), "1s234ms") << "not format_duration's rounded 1.2s";
  EXPECT_EQ(exact_duration(24 * kHour + 4 * kMinute), "24h4m") << "as the gateways write it, not 1d4m";
  EXPECT_EQ(exact_duration(30 * 24 * kHour + kSecond), "30d1s");
  EXPECT_EQ(exact_duration(15 * kSecond), "15s");
}

}  // namespace
}  // namespace twice::gateway
