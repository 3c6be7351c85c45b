// The gateway's retry behaviour, seen through runs of simple handlers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support.h"

namespace twice {
namespace {

using testing::run_seed;

// Counts deliveries and answers as configured; credits nothing.
class Answers final : public Handler {
 public:
  explicit Answers(Reply r) : reply_(std::move(r)) {}
  Reply handle(const Notify& n, Env& env) override {
    env.note(n.raw_payload);
    return reply_;
  }

 private:
  Reply reply_;
};

run::RunResult run_with(const gateway::Scenario& s, Reply reply) {
  HandlerInfo info{"answers", "", [reply] { return std::make_unique<Answers>(reply); }};
  return run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt});
}

std::vector<Micros> delivery_times(const run::RunResult& r) {
  std::vector<Micros> out;
  for (const auto& e : r.trace.events())
    if (e.kind == sim::EventKind::kGateway && e.text.find("sends notify") != std::string::npos) out.push_back(e.time);
  return out;
}

TEST(Gateway, WechatRetriesOnItsScheduleUntilExhausted) {
  auto s = testing::one_order_scenario();
  s.latency_min = s.latency_max = 0;
  const auto r = run_with(s, Reply::fail());
  const auto times = delivery_times(r);
  ASSERT_EQ(times.size(), 16u) << "one notification and 15 retries";
  // Each retry follows the previous failure (an immediate 500) by the schedule's gap.
  EXPECT_EQ(times[1] - times[0], 15 * kSecond);
  EXPECT_EQ(times[2] - times[1], 15 * kSecond);
  EXPECT_EQ(times[3] - times[2], 30 * kSecond);
  EXPECT_EQ(times[15] - times[14], 6 * kHour);
  EXPECT_GT(r.end_time, 24 * kHour);
}

TEST(Gateway, WechatV3TakesA200WithAFailBodyAsAnAck) {
  auto s = testing::one_order_scenario();
  const auto r = run_with(s, Reply{200, R"({"code":"FAIL"})"});
  EXPECT_EQ(delivery_times(r).size(), 1u) << "WeChat reads the status before the body: no retry";
}

TEST(Gateway, AlipayAcksOnlyOnTheExactBodySuccess) {
  auto s = testing::one_order_scenario();
  s.profile = "alipay";
  s.max_attempts = 3;
  EXPECT_EQ(delivery_times(run_with(s, Reply{200, "success"})).size(), 1u);
  EXPECT_EQ(delivery_times(run_with(s, Reply{200, R"({"code":"success"})"})).size(), 3u);
}

TEST(Gateway, NoAnswerWithinTheTimeoutIsAFailedAttempt) {
  auto s = testing::one_order_scenario();
  s.latency_min = s.latency_max = 6 * kSecond;  // each statement is slower than WeChat's 5 s
  s.max_attempts = 2;
  const auto r = run_seed(s, "unique-key+cas", 1);
  const auto trace = sim::format_trace(r.trace);
  EXPECT_NE(trace.find("no answer within 5s; retries in 15s"), std::string::npos) << trace;
  EXPECT_NE(trace.find("late reply to notify O-1 TRANSACTION.SUCCESS attempt 1 ignored"), std::string::npos) << trace;
}

TEST(Gateway, PayloadIsJsonWithTheOrderFieldsEvenWhenTheyNeedEscaping) {
  auto s = testing::one_order_scenario();
  s.orders[0].order_no = "O-\"quoted\"<script>";
  const auto r = run_with(s, Reply::success());
  int parsed = 0;
  for (const auto& e : r.trace.events()) {
    if (e.kind != sim::EventKind::kNote) continue;
    const auto j = nlohmann::json::parse(e.text);
    EXPECT_EQ(j["out_trade_no"], "O-\"quoted\"<script>");
    EXPECT_EQ(j["amount"]["total"], 100);
    EXPECT_EQ(j["event_type"], "TRANSACTION.SUCCESS");
    ++parsed;
  }
  EXPECT_EQ(parsed, 1);
}

}  // namespace
}  // namespace twice
