#include "gateway/scenario.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../unique_temp_dir.h"
#include "twice/time.h"

namespace twice::gateway {
namespace {

class ScenarioFile : public ::testing::Test {
 protected:
  std::string write(const std::string& body) {
    const auto& dir = twice::testing::unique_temp_dir();
    path_ = (dir / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".toml")).string();
    std::ofstream(path_) << body;
    return path_;
  }
  // Loads `body`; returns the error message ("" when it loaded).
  std::string error_of(const std::string& body) {
    StatusOr<Scenario> s = load_scenario(write(body));
    return s.ok() ? "" : s.status().message();
  }
  std::string path_;
};

constexpr const char* kOrder = "\n[[orders]]\norder_no = \"O-1\"\nuser = \"u\"\namount = 100\n";

// docs/scenarios.md's annotated example is what a user copies first: it loads.
TEST_F(ScenarioFile, TheAnnotatedExampleOfTheDocsLoads) {
  std::ifstream doc(std::string(TWICE_SOURCE_DIR) + "/docs/scenarios.md");
  ASSERT_TRUE(doc) << "docs/scenarios.md";
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const std::size_t start = text.find("## An annotated example\n\n```toml\n");
  ASSERT_NE(start, std::string::npos);
  const std::size_t body = text.find('\n', text.find("```toml", start)) + 1;
  const std::size_t end = text.find("```\n", body);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(error_of(text.substr(body, end - body)), "");
}

TEST_F(ScenarioFile, AValidFileLoadsWithEveryField) {
  StatusOr<Scenario> loaded = load_scenario(write(std::string(R"(description = "d"
profile = "alipay"
[network]
latency = ["5ms", "1s"]
[faults]
duplicate = 0.5
max_copies = 3
duplicate_delay = ["10ms", "2s"]
ack_loss = 0.25
max_attempts = 4
)") + kOrder + "currency = \"USD\"\npaid_at = \"1m30s\"\n"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Scenario& s = *loaded;
  EXPECT_EQ(s.name, "AValidFileLoadsWithEveryField");
  EXPECT_EQ(s.profile, "alipay");
  EXPECT_EQ(s.latency_min, 5 * kMillisecond);
  EXPECT_EQ(s.latency_max, kSecond);
  EXPECT_DOUBLE_EQ(s.duplicate, 0.5);
  EXPECT_EQ(s.max_copies, 3);
  EXPECT_EQ(s.duplicate_delay_max, 2 * kSecond);
  EXPECT_DOUBLE_EQ(s.ack_loss, 0.25);
  EXPECT_EQ(s.max_attempts, 4);
  ASSERT_EQ(s.orders.size(), 1u);
  EXPECT_EQ(s.orders[0].currency, "USD");
  EXPECT_EQ(s.orders[0].paid_at, 90 * kSecond);
}

TEST_F(ScenarioFile, RefundsAndClosesAreReadPerOrder) {
  StatusOr<Scenario> loaded = load_scenario(write(R"(description = "d"
profile = "stripe"
[[orders]]
order_no = "O-1"
user = "u"
amount = 100
refund_after = "20m"
[[orders]]
order_no = "O-2"
user = "u"
amount = 100
paid = false
closed_at = "1h"
)"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Scenario& s = *loaded;
  EXPECT_EQ(s.orders[0].refund_after, 20 * kMinute);
  EXPECT_EQ(s.orders[0].closed_at, -1) << "not closed by default";
  EXPECT_EQ(s.orders[1].closed_at, kHour);
}

TEST_F(ScenarioFile, AClosedTradeMustBeUnpaidAndARefundMustFollowAPayment) {
  const std::string head = "description = \"d\"\nprofile = \"adyen\"\n";
  auto e = error_of(head + kOrder + "closed_at = \"1h\"\n");
  EXPECT_EQ(e, path_ + ":8: 'closed_at' needs 'paid = false': the gateway closes only a trade that was never paid");
  e = error_of(head + kOrder + "refund_after = \"0s\"\n");
  EXPECT_EQ(e, path_ + ":8: 'refund_after' must be longer than 0s: a refund follows the payment");
}

TEST_F(ScenarioFile, UnknownKeyNamesTheLineAndTheAllowedKeys) {
  const auto e = error_of(std::string("description = \"d\"\n[faults]\nduplicates = 0.5\n") + kOrder);
  EXPECT_EQ(e, path_ + ":3: unknown key 'duplicates' in [faults]; allowed: duplicate, max_copies, duplicate_delay, "
                       "ack_loss, max_attempts, request_loss, pause, pause_duration, crash, restart_after, "
                       "mq_redelivery, mq_delay, second_signal, second_signal_delay");
}

// The docs' example of that error lists the keys the loader really allows.
TEST_F(ScenarioFile, TheDocsErrorExampleListsTheKeysTheLoaderAllows) {
  std::ifstream doc(std::string(TWICE_SOURCE_DIR) + "/docs/scenarios.md");
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const std::string lead = "unknown key 'duplicates' in [faults]; allowed: ";
  const std::size_t at = text.find(lead);
  ASSERT_NE(at, std::string::npos);
  const std::string documented = text.substr(at, text.find('\n', at) - at);
  const auto e = error_of(std::string("description = \"d\"\n[faults]\nduplicates = 0.5\n") + kOrder);
  EXPECT_EQ(e.substr(e.find(lead)), documented);
}

// fidelity finding 8: max_attempts can only cut the schedule short; past it
// the gateway stopped at the schedule's end, silently.
TEST_F(ScenarioFile, MaxAttemptsPastTheProfilesScheduleIsRefused) {
  auto e = error_of(std::string("description = \"d\"\nprofile = \"alipay\"\n[faults]\nmax_attempts = 16\n") + kOrder);
  EXPECT_EQ(e, path_ + ":4: 'max_attempts' is 16, but profile 'alipay' sends at most 8 attempts; write max_attempts = 8 "
                       "or less, or omit it for the whole schedule");
  e = error_of(std::string("description = \"d\"\n[faults]\nmax_attempts = 17\n") + kOrder);
  EXPECT_NE(e.find(":3: 'max_attempts' is 17, but profile 'wechat-v3' sends at most 16 attempts"), std::string::npos)
      << e;
  EXPECT_EQ(error_of(std::string("description = \"d\"\nprofile = \"alipay\"\n[faults]\nmax_attempts = 8\n") + kOrder), "");
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[faults]\nmax_attempts = 16\n") + kOrder), "");
}

// fidelity finding 9: a second success event only where the gateway sends one.
TEST_F(ScenarioFile, ASecondSignalNeedsAProfileThatSendsASecondSuccessEvent) {
  for (const char* profile : {"wechat-v3", "wechat-v2", "paypal", "adyen"}) {
    const auto e = error_of(fmt::format("description = \"d\"\nprofile = \"{}\"\n[faults]\nsecond_signal = 1.0\n{}",
                                        profile, kOrder));
    EXPECT_EQ(e, fmt::format("{}:4: profile '{}' sends no second success event for a payment; 'second_signal' needs "
                             "one of: alipay (TRADE_FINISHED), stripe (charge.succeeded)",
                             path_, profile));
  }
  for (const char* profile : {"alipay", "stripe"})
    EXPECT_EQ(error_of(fmt::format("description = \"d\"\nprofile = \"{}\"\n[faults]\nsecond_signal = 1.0\n{}",
                                   profile, kOrder)),
              "");
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[faults]\nsecond_signal = 0.0\n") + kOrder), "")
      << "no second signal asked for";
}

TEST_F(ScenarioFile, WrongTypeIsNamed) {
  const auto e = error_of(std::string("description = \"d\"\n[faults]\nmax_copies = \"two\"\n") + kOrder);
  EXPECT_EQ(e, path_ + ":3: 'max_copies' must be an integer, got a string");
}

TEST_F(ScenarioFile, ProbabilityOutOfRange) {
  const auto e = error_of(std::string("description = \"d\"\n[faults]\nack_loss = 1.5\n") + kOrder);
  EXPECT_EQ(e, path_ + ":3: 'ack_loss' is 1.5; a probability must be from 0 to 1");
}

TEST_F(ScenarioFile, UnknownProfileListsTheKnownOnes) {
  const auto e = error_of(std::string("description = \"d\"\nprofile = \"wechat-v9\"\n") + kOrder);
  EXPECT_NE(e.find(path_ + ":2: unknown profile 'wechat-v9'; allowed: wechat-v3, wechat-v2, alipay"), std::string::npos) << e;
}

TEST_F(ScenarioFile, BadDurationShowsTheFormat) {
  const auto e = error_of(std::string("description = \"d\"\n[network]\nlatency = [\"5ms\", \"soon\"]\n") + kOrder);
  EXPECT_NE(e.find(path_ + ":3: 'latency' is \"soon\", not a duration"), std::string::npos) << e;
}

// "1m1h" and "5s5s" read as durations once (as 61 minutes and 10 seconds):
// units go from the largest down, each once, as "1h30m" does.
TEST_F(ScenarioFile, ADurationsUnitsGoFromTheLargestDownEachOnce) {
  for (const char* bad : {"1m1h", "5s5s", "1ms1s"}) {
    const auto e = error_of(fmt::format("description = \"d\"\n[network]\nlatency = [\"5ms\", \"{}\"]\n{}", bad, kOrder));
    EXPECT_NE(e.find(fmt::format(":3: 'latency' is \"{}\", not a duration; write e.g.", bad)), std::string::npos) << e;
    EXPECT_NE(e.find("(units from the largest down, each once)"), std::string::npos) << e;
  }
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[network]\nlatency = [\"5ms\", \"1m30s500ms\"]\n") + kOrder), "");
}

// An order's user is named like its number: never empty; a currency is three capitals.
TEST_F(ScenarioFile, AnEmptyUserAndALowerCaseCurrencyAreRefused) {
  const std::string no_user = error_of("description = \"d\"\n[[orders]]\norder_no = \"O-1\"\nuser = \"\"\namount = 100\n");
  EXPECT_EQ(no_user, path_ + ":4: 'user' must not be empty");
  const std::string lower = error_of("description = \"d\"\n[[orders]]\norder_no = \"O-1\"\nuser = \"u\"\namount = 100\n"
                                     "currency = \"usd\"\n");
  EXPECT_EQ(lower, path_ + ":6: 'currency' must be a 3-letter ISO 4217 code like \"CNY\"");
}

TEST_F(ScenarioFile, InvalidTomlGivesTheParserLine) {
  const auto e = error_of("description = \"d\"\n[faults\n");
  EXPECT_NE(e.find(path_ + ":2: not valid TOML"), std::string::npos) << e;
}

// toml++ says "cannot redefine existing integer '"amamount" '" for a quoted
// key given twice: the message names the key from the file's line instead.
TEST_F(ScenarioFile, AKeyGivenTwiceIsNamed) {
  const auto quoted =
      error_of("description = \"d\"\n[[orders]]\norder_no = \"O-1\"\nuser = \"u\"\namount = 1\n\"amount\" = 2\n");
  EXPECT_EQ(quoted, path_ + ":6: not valid TOML: the key 'amount' is given twice in its table: keep one");
  const auto bare = error_of("description = \"d\"\n[faults]\nduplicate = 1.0\nduplicate = 0.5\n");
  EXPECT_EQ(bare, path_ + ":4: not valid TOML: the key 'duplicate' is given twice in its table: keep one");
}

TEST_F(ScenarioFile, OrdersAreRequiredAndUnique) {
  EXPECT_NE(error_of("description = \"d\"\n").find("needs at least one [[orders]]"), std::string::npos);
  const auto e = error_of(std::string("description = \"d\"\n") + kOrder + kOrder);
  EXPECT_NE(e.find("order 'O-1' appears twice"), std::string::npos) << e;
  EXPECT_NE(error_of(std::string("description = \"d\"\n[[orders]]\norder_no = \"O-1\"\nuser = \"u\"\n")).find("an order needs 'amount'"),
            std::string::npos);
}

TEST_F(ScenarioFile, MissingFileSaysSo) {
  StatusOr<Scenario> s = load_scenario("/nonexistent/x.toml");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "/nonexistent/x.toml: no such file");
}

TEST_F(ScenarioFile, DurationsThatOverflowOrPassTheLimitAreRefusedWithTheLine) {
  const auto overflow =
      error_of(std::string("description = \"d\"\n[merchant]\nclose_after = \"106751991d\"\n") + kOrder);
  EXPECT_NE(overflow.find(path_ + ":3: 'close_after' is \"106751991d\"; durations are at most 30d"), std::string::npos)
      << overflow;
  const auto wraps =
      error_of(std::string("description = \"d\"\n[merchant]\nclose_after = \"99999999999999999999d\"\n") + kOrder);
  EXPECT_NE(wraps.find(":3: 'close_after' is \"99999999999999999999d\""), std::string::npos) << wraps;
  const auto sum = error_of(std::string("description = \"d\"\n[merchant]\nclose_after = \"106751991d27h\"\n") + kOrder);
  EXPECT_NE(sum.find("longer than any run can be"), std::string::npos) << sum;
  EXPECT_EQ(parse_duration("106751992d"), std::nullopt);  // past INT64_MAX microseconds: no wrap
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[merchant]\nclose_after = \"30d\"\n") + kOrder), "");
}

TEST_F(ScenarioFile, OrderAndAttackCountsHaveLimits) {
  std::string many = "description = \"d\"\n";
  for (std::size_t i = 0; i <= kMaxOrders; ++i)
    many += "[[orders]]\norder_no = \"O-" + std::to_string(i) + "\"\nuser = \"u\"\namount = 1\n";
  EXPECT_NE(error_of(many).find("201 orders; a scenario has at most 200"), std::string::npos) << error_of(many);
  const auto e = error_of(std::string("description = \"d\"\n[attacks]\nforged_signature = 101\n") + kOrder);
  EXPECT_NE(e.find(":3: 'forged_signature' is 101; allowed: 0 to 100"), std::string::npos) << e;
}

TEST_F(ScenarioFile, ControlCharactersInAMessageAreEscapedOnOneLine) {
  const auto e = error_of(std::string("description = \"d\"\n\"bad\\u001b[31m\\nkey\" = 1\n") + kOrder);
  EXPECT_NE(e.find("unknown key 'bad\\x1b[31m\\nkey'"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_EQ(e.find('\x1b'), std::string::npos);
}

TEST_F(ScenarioFile, AFolderAFifoAndASymlinkLoopEachGetTheirOwnMessage) {
  const auto dir = twice::testing::unique_temp_dir() / "kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "folder.toml");
  ASSERT_EQ(::mkfifo((dir / "fifo.toml").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir / "b.toml", dir / "a.toml");
  std::filesystem::create_symlink(dir / "a.toml", dir / "b.toml");
  auto message = [](const std::filesystem::path& p) {
    StatusOr<Scenario> s = load_scenario(p.string());
    EXPECT_FALSE(s.ok());
    return s.status().message();
  };
  EXPECT_NE(message(dir / "folder.toml").find("folder.toml: a folder, not a scenario file"), std::string::npos);
  EXPECT_NE(message(dir / "fifo.toml").find("fifo.toml: not a regular file (a FIFO)"), std::string::npos);
  EXPECT_NE(message(dir / "a.toml").find("a.toml: a loop of symbolic links"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// audit: a file named with '@' loaded and ran, but expected.toml reads
// "name@postgres" as the cell of "name" on PostgreSQL: no line could name it.
TEST_F(ScenarioFile, AFileNameWithAnAtSignIsRefused) {
  const auto path = twice::testing::unique_temp_dir() / "double@pay.toml";
  std::ofstream(path) << std::string("description = \"d\"\n") + kOrder;
  StatusOr<Scenario> s = load_scenario(path.string());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            path.string() + ": a scenario's name holds no '@' (expected.toml reads \"name@postgres\" as scenario "
                            "\"name\" on an engine, so no line could name this one); rename the file without '@'");
}

// A folder named "x.toml" inside the scenarios folder: said as such, not with
// load_scenario's advice to give a folder as --scenarios-dir (it was).
TEST(ScenarioDir, AFolderNamedLikeAScenarioFileIsNamedAsSuch) {
  const auto dir = twice::testing::unique_temp_dir() / "with-a-folder";
  std::filesystem::create_directories(dir / "x.toml");
  const StatusOr<std::vector<Scenario>> all = load_scenario_dir(dir.string());
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().message(), (dir / "x.toml").string() + ": a folder named like a scenario file in the "
                                        "scenarios folder " + dir.string() + "; rename it or move it out");
}

TEST(BundledScenarios, AllLoadWithDescriptions) {
  StatusOr<std::vector<Scenario>> all = load_scenario_dir(std::string(TWICE_SOURCE_DIR) + "/scenarios");
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_GE(all->size(), 3u);
  for (const auto& s : *all) EXPECT_FALSE(s.description.empty()) << s.name;
}

TEST_F(ScenarioFile, ServicesChangeABuiltInOneAndAddTheScenariosOwn) {
  StatusOr<Scenario> loaded = load_scenario(write(std::string(R"(description = "d"
[[services]]
name = "warehouse"
idempotency_keys = false
timeout = 0.25
slow = 0.5
slow_duration = ["1s", "2s"]
[[services]]
name = "referrals"
effects = ["pay_referral"]
retention = "1h"
[checks]
effects = ["ship", "pay_referral"]
)") + kOrder));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Scenario& s = *loaded;
  ASSERT_EQ(s.services.size(), 4u) << "the three built in, then the scenario's own";
  EXPECT_EQ(s.services[0].name, "warehouse");
  EXPECT_FALSE(s.services[0].idempotency_keys);
  EXPECT_DOUBLE_EQ(s.services[0].timeout, 0.25);
  EXPECT_EQ(s.services[0].slow_max, 2 * kSecond);
  EXPECT_EQ(s.services[0].effects, std::vector<std::string>{"ship"});
  EXPECT_EQ(s.services[3].name, "referrals");
  EXPECT_EQ(s.services[3].retention, kHour);
  EXPECT_EQ(s.required_effects, (std::vector<std::string>{"ship", "pay_referral"}));
}

TEST_F(ScenarioFile, AScenarioWithoutServicesHasTheBuiltInThree) {
  StatusOr<Scenario> loaded = load_scenario(write(std::string("description = \"d\"\n") + kOrder));
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Scenario& s = *loaded;
  EXPECT_TRUE(s.services.empty());
  ASSERT_EQ(services_of(s).size(), 3u);
  EXPECT_EQ(services_of(s)[1].name, "mail");
}

TEST_F(ScenarioFile, BadServicesAreRefusedWithTheirLine) {
  const std::string head = "description = \"d\"\n[[services]]\n";
  // error_of() names the file it wrote: read path_ only after calling it.
  std::string e = error_of(head + "name = \"courier\"\n" + kOrder);
  EXPECT_EQ(e, path_ + ":2: service 'courier' is not built in (warehouse, mail, inventory): it needs 'effects', e.g. "
                       "effects = [\"pay_referral\"]");
  e = error_of(head + "name = \"\"\n" + kOrder);
  EXPECT_EQ(e, path_ + ":3: a service's 'name' must not be empty");
  e = error_of(head + "name = \"a:b\"\neffects = [\"x\"]\n" + kOrder);
  EXPECT_EQ(e, path_ + ":3: service name 'a:b' may hold only letters, digits, '-' and '_'");
  e = error_of(head + "name = \"courier\"\neffects = [\"ship\"]\n" + kOrder);
  EXPECT_NE(e.find("effect 'ship' is declared by both 'warehouse' and 'courier'"), std::string::npos) << e;
  e = error_of(head + "name = \"mail\"\ntimeout = 2\n" + kOrder);
  EXPECT_EQ(e, path_ + ":4: 'timeout' is 2; a probability must be from 0 to 1");
}

// audit: values that loaded and then did nothing. Each is refused with its
// line and what to write instead.
TEST_F(ScenarioFile, DuplicatesThatCanMakeNoCopyAreRefused) {
  std::string e = error_of(std::string("description = \"d\"\n[faults]\nduplicate = 0.5\nmax_copies = 0\n") + kOrder);
  EXPECT_EQ(e, path_ + ":4: 'max_copies' is 0, so 'duplicate' (0.5) can never send a copy; write max_copies = 1 or "
                       "more, or drop 'duplicate'");
  e = error_of(std::string("description = \"d\"\n[faults]\nmax_copies = 0\nduplicate = 1.0\n") + kOrder);
  EXPECT_EQ(e, path_ + ":3: 'max_copies' is 0, so 'duplicate' (1) can never send a copy; write max_copies = 1 or "
                       "more, or drop 'duplicate'");
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[faults]\nduplicate = 0.0\nmax_copies = 0\n") + kOrder), "");
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[faults]\nduplicate = 0.5\nmax_copies = 1\n") + kOrder), "");
}

TEST_F(ScenarioFile, ACloseAfterOfZeroIsRefused) {
  const std::string e = error_of(std::string("description = \"d\"\n[merchant]\nclose_after = \"0s\"\n") + kOrder);
  EXPECT_EQ(e, path_ + ":3: 'close_after' is \"0s\", and no order closer runs for it; give how long an order waits "
                       "before the closer closes it, e.g. \"30m\", or leave close_after out for no closer");
  EXPECT_EQ(error_of(std::string("description = \"d\"\n[merchant]\nclose_after = \"1s\"\n") + kOrder), "");
}

TEST_F(ScenarioFile, StockOnAServiceThatKeepsNoneIsRefused) {
  const std::string head = "description = \"d\"\n[[services]]\n";
  std::string e = error_of(head + "name = \"warehouse\"\nstock = 5\n" + kOrder);
  EXPECT_EQ(e, path_ + ":4: service 'warehouse' keeps no stock (only a service whose effects include \"decrement\" "
                       "does); drop 'stock'");
  e = error_of(head + "name = \"referrals\"\nstock = 5\neffects = [\"pay_referral\"]\n" + kOrder);
  EXPECT_EQ(e, path_ + ":4: service 'referrals' keeps no stock (only a service whose effects include \"decrement\" "
                       "does); drop 'stock'");
  e = error_of(head + "name = \"inventory\"\neffects = [\"reserve\"]\nstock = 5\n" + kOrder);
  EXPECT_EQ(e, path_ + ":5: service 'inventory' keeps no stock (only a service whose effects include \"decrement\" "
                       "does); drop 'stock'");
  EXPECT_EQ(error_of(head + "name = \"inventory\"\nstock = 5\n" + kOrder), "");
  EXPECT_EQ(error_of(head + "name = \"inventory\"\neffects = [\"hold\"]\n[[services]]\nname = \"shelf\"\n"
                            "effects = [\"decrement\"]\nstock = 3\n" + kOrder),
            "");
}

}  // namespace
}  // namespace twice::gateway
