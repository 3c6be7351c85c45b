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
  return run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt}).value();
}

std::vector<Micros> delivery_times(const run::RunResult& r) {
  std::vector<Micros> out;
  for (const auto& e : r.trace.events())
    if (e.kind == sim::TraceKind::kGateway && e.text.find("sends notify") != std::string::npos) out.push_back(e.time);
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
    if (e.kind != sim::TraceKind::kNote) continue;
    const auto j = nlohmann::json::parse(e.text);
    EXPECT_EQ(j["out_trade_no"], "O-\"quoted\"<script>");
    EXPECT_EQ(j["amount"]["total"], 100);
    EXPECT_EQ(j["event_type"], "TRANSACTION.SUCCESS");
    ++parsed;
  }
  EXPECT_EQ(parsed, 1);
}

// Collects what reaches the endpoint, and acks it.
class Collects final : public Handler {
 public:
  explicit Collects(std::vector<Notify>* seen) : seen_(seen) {}
  Reply handle(const Notify& n, Env&) override {
    seen_->push_back(n);
    return Reply::ack(n);
  }

 private:
  std::vector<Notify>* seen_;
};

TEST(Gateway, AlipaySaysTradeClosedForACloseAndForARefundAndEventKindTellsThemApart) {
  auto s = testing::one_order_scenario();
  s.profile = "alipay";
  s.orders[0].refund_after = 20 * kMinute;
  gateway::OrderSpec unpaid = s.orders[0];
  unpaid.order_no = "O-2";
  unpaid.paid = false;
  unpaid.refund_after = 0;
  unpaid.closed_at = 15 * kMinute;
  s.orders.push_back(unpaid);
  std::vector<Notify> seen;
  HandlerInfo info{"collects", "", [&seen] { return std::make_unique<Collects>(&seen); }};
  run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt}).value();

  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].event_type, "TRADE_SUCCESS");
  EXPECT_EQ(event_kind(seen[0]), EventKind::kPaid);
  EXPECT_EQ(seen[1].out_trade_no, "O-2");
  EXPECT_EQ(seen[1].event_type, "TRADE_CLOSED");
  EXPECT_EQ(seen[1].refund_amount, 0);
  EXPECT_EQ(event_kind(seen[1]), EventKind::kClosed);
  EXPECT_EQ(seen[2].out_trade_no, "O-1");
  EXPECT_EQ(seen[2].event_type, "TRADE_CLOSED");
  EXPECT_EQ(seen[2].refund_amount, 100);
  EXPECT_EQ(event_kind(seen[2]), EventKind::kRefunded);
  // The refund is in the signed payload, not only in the struct.
  const auto body = nlohmann::json::parse(seen[2].raw_payload);
  EXPECT_EQ(body["amount"]["refund"], 100);
  EXPECT_EQ(body["trade_state"], "REFUND");
}

TEST(Gateway, EachProfileNamesItsRefundAndCloseEvents) {
  auto kind_of = [](const char* type, std::int64_t refund = 0) {
    Notify n;
    n.event_type = type;
    n.refund_amount = refund;
    return event_kind(n);
  };
  for (const char* t : {"REFUND.SUCCESS", "charge.refunded", "PAYMENT.CAPTURE.REFUNDED", "REFUND"})
    EXPECT_EQ(kind_of(t), EventKind::kRefunded) << t;
  for (const char* t : {"TRADE_CLOSED", "payment_intent.canceled", "CANCELLATION"})
    EXPECT_EQ(kind_of(t), EventKind::kClosed) << t;
  for (const char* t : {"TRANSACTION.SUCCESS", "TRADE_SUCCESS", "TRADE_FINISHED", "payment_intent.succeeded",
                        "charge.succeeded", "PAYMENT.CAPTURE.COMPLETED", "AUTHORISATION"})
    EXPECT_EQ(kind_of(t), EventKind::kPaid) << t;
  EXPECT_EQ(kind_of("customer.created"), EventKind::kOther);
  EXPECT_EQ(kind_of(""), EventKind::kOther) << "WeChat's empty close event type is no event";
  EXPECT_EQ(kind_of("TRADE_CLOSED", 990), EventKind::kRefunded) << "Alipay's full refund";
}

}  // namespace
}  // namespace twice
