// The gateway's retry behaviour, seen through runs of simple handlers.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support.h"
#include "gateway/retry_profile.h"
#include "gateway/signature.h"

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

// Takes `step` of virtual time (one clock sleep), then acks.
class SlowAck final : public Handler {
 public:
  explicit SlowAck(Micros step) : step_(step) {}
  Reply handle(const Notify& n, Env& env) override {
    env.clock().sleep(step_);
    return Reply::ack(n);
  }

 private:
  Micros step_;
};

std::vector<Micros> slow_ack_deliveries(const gateway::Scenario& s, Micros step) {
  HandlerInfo info{"slow-ack", "", [step] { return std::make_unique<SlowAck>(step); }};
  return delivery_times(run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt}).value());
}

// A scenario's [gateway] timeout is the one the gateway waits: a 4 s handler
// step is in time for WeChat's published 5 s, and too late for an incident's 3 s.
TEST(Gateway, TheScenariosTimeoutDecidesWhetherASlowHandlerTimesOut) {
  auto s = testing::one_order_scenario();
  s.latency_min = s.latency_max = 0;
  s.max_attempts = 2;
  const auto published = slow_ack_deliveries(s, 4 * kSecond);
  EXPECT_EQ(published.size(), 1u) << "acked within 5 s";
  s.gateway.timeout = 3 * kSecond;
  const auto incident = slow_ack_deliveries(s, 4 * kSecond);
  ASSERT_EQ(incident.size(), 2u) << "no answer within 3 s: retried";
  EXPECT_EQ(incident[1] - incident[0], 3 * kSecond + 15 * kSecond) << "the 3 s timeout, then WeChat's first wait";
  // And the reverse: a 6 s step is too late for 5 s, in time for 10 s.
  s.gateway.timeout.reset();
  EXPECT_EQ(slow_ack_deliveries(s, 6 * kSecond).size(), 2u);
  s.gateway.timeout = 10 * kSecond;
  EXPECT_EQ(slow_ack_deliveries(s, 6 * kSecond).size(), 1u);
}

// [gateway] retry_intervals are the waits between attempts, exactly as
// written, and their number bounds the attempts as the profile's does.
TEST(Gateway, TheScenariosRetryIntervalsAreTheWaitsBetweenDeliveries) {
  auto s = testing::one_order_scenario();
  s.latency_min = s.latency_max = 0;
  s.profile = "stripe";
  const std::vector<Micros> waits = {7 * kSecond, 90 * kSecond, 250 * kMillisecond, 3 * kHour};
  s.gateway.retry_intervals = waits;
  const auto times = delivery_times(run_with(s, Reply::fail()));
  ASSERT_EQ(times.size(), waits.size() + 1) << "one notification and a retry per wait";
  for (std::size_t i = 0; i < waits.size(); ++i) EXPECT_EQ(times[i + 1] - times[i], waits[i]) << i;
  s.max_attempts = 2;
  EXPECT_EQ(delivery_times(run_with(s, Reply::fail())).size(), 2u);
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
  for (const char* t : {"TRADE_CLOSED", "payment_intent.canceled", "OFFER_CLOSED"})
    EXPECT_EQ(kind_of(t), EventKind::kClosed) << t;
  for (const char* t : {"TRANSACTION.SUCCESS", "TRADE_SUCCESS", "TRADE_FINISHED", "payment_intent.succeeded",
                        "charge.succeeded", "PAYMENT.CAPTURE.COMPLETED", "AUTHORISATION"})
    EXPECT_EQ(kind_of(t), EventKind::kPaid) << t;
  EXPECT_EQ(kind_of("customer.created"), EventKind::kOther);
  // Adyen's CANCELLATION answers the merchant's own cancel of an authorised
  // payment; an offer that expires unpaid is OFFER_CLOSED (fidelity finding 5).
  EXPECT_EQ(kind_of("CANCELLATION"), EventKind::kOther);
  EXPECT_EQ(kind_of(""), EventKind::kOther) << "WeChat's empty close event type is no event";
  EXPECT_EQ(kind_of("TRADE_CLOSED", 990), EventKind::kRefunded) << "Alipay's full refund";
}

}  // namespace
}  // namespace twice

namespace twice {
namespace {

// fidelity finding 1: the payment's and the refund's notifies are all lost,
// and the reconciler asks the gateway 25 minutes after the refund. The query
// must say what the gateway holds now (refunded), not "paid": a correct
// handler given "paid" credits money already given back (lost_refund).
TEST(Gateway, TheQueryOfARefundedPaymentSaysRefundedAndACorrectHandlerCreditsNothing) {
  auto s = testing::one_order_scenario();
  s.request_loss = 1.0;
  s.max_attempts = 2;
  s.reconciler = true;
  s.orders[0].amount = 5000;
  s.orders[0].refund_after = 5 * kMinute;
  for (const char* handler : {"select-for-update", "unique-key+cas", "cas"}) {
    const auto r = testing::run_seed(s, handler, 7);
    EXPECT_TRUE(testing::invariants_of(r).empty()) << handler << ": " << sim::format_trace(r.trace);
    const auto trace = sim::format_trace(r.trace);
    EXPECT_NE(trace.find("query gateway for O-1 -> refunded 5000 CNY (4200000001)"), std::string::npos) << trace;
    EXPECT_EQ(trace.find("-> paid 5000"), std::string::npos) << trace;
  }
}

TEST(Gateway, TheQueryOfAPaymentNotRefundedSaysPaid) {
  auto s = testing::one_order_scenario();
  s.request_loss = 1.0;
  s.max_attempts = 2;
  s.reconciler = true;
  const auto r = testing::run_seed(s, "select-for-update", 7);
  EXPECT_TRUE(testing::invariants_of(r).empty());
  EXPECT_NE(sim::format_trace(r.trace).find("query gateway for O-1 -> paid 100 CNY (4200000001)"), std::string::npos);
}

}  // namespace
}  // namespace twice

namespace twice {
namespace {

bool acks(const char* profile, int status, std::string body) {
  return gateway::find_profile(profile)->is_ack(Reply{status, std::move(body)});
}

// fidelity finding 3: WeChat Pay v2 parses XML; CDATA is a lexical detail.
TEST(Gateway, WechatV2ReadsReturnCodeAsAnXmlReaderDoes) {
  EXPECT_TRUE(acks("wechat-v2", 200, "<xml><return_code><![CDATA[SUCCESS]]></return_code></xml>"));
  EXPECT_TRUE(acks("wechat-v2", 200, "<xml><return_code>SUCCESS</return_code><return_msg>OK</return_msg></xml>"));
  EXPECT_TRUE(acks("wechat-v2", 200, "<?xml version=\"1.0\"?>\n<xml>\n  <return_code>\n    SUCCESS\n  </return_code>\n</xml>\n"));
  EXPECT_TRUE(acks("wechat-v2", 200, "<xml><return_code> <![CDATA[SUCCESS]]> </return_code></xml>"));
  EXPECT_TRUE(acks("wechat-v2", 200, "<xml><!-- ok --><return_code>SUCC&#69;SS</return_code></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "<xml><return_code><![CDATA[FAIL]]></return_code></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 500, "<xml><return_code>SUCCESS</return_code></xml>"));
  // Only the return_code element's content, never a substring elsewhere.
  EXPECT_FALSE(acks("wechat-v2", 200,
                    "<xml><return_msg><![CDATA[<return_code><![CDATA[SUCCESS]]></return_code>]]></return_msg></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "<xml><return_msg><return_code>SUCCESS</return_code></return_msg></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "error: <return_code><![CDATA[SUCCESS]]></return_code>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "<xml><return_code>SUCCESS</return_code>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "<xml><return_code>SUCCESSFUL</return_code></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "<xml><return_code>SUCCESS</return_msg></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 200, "<xml><return_code><b>SUCCESS</b></return_code></xml>"));
  EXPECT_FALSE(acks("wechat-v2", 200, R"({"return_code":"SUCCESS"})"));
  Notify n;
  n.gateway = "wechat-v2";
  EXPECT_TRUE(gateway::find_profile("wechat-v2")->is_ack(Reply::ack(n)));
}

// fidelity finding 4: Adyen accepts by HTTP status (200/202), whatever the body.
TEST(Gateway, AdyenAcksByStatusNotByTheAcceptedBody) {
  EXPECT_TRUE(acks("adyen", 200, "[accepted]"));
  EXPECT_TRUE(acks("adyen", 202, ""));
  EXPECT_TRUE(acks("adyen", 200, "ok"));
  EXPECT_FALSE(acks("adyen", 503, "[accepted]"));
  EXPECT_FALSE(acks("adyen", 500, "[accepted]"));
  Notify n;
  n.gateway = "adyen";
  EXPECT_TRUE(gateway::find_profile("adyen")->is_ack(Reply::ack(n)));
}

// fidelity finding 11: a 200 that is no ack says what the gateway wanted.
TEST(Gateway, ANotAckedLineSaysWhyWhenTheStatusWasFine) {
  auto s = testing::one_order_scenario();
  s.profile = "alipay";
  s.max_attempts = 2;
  auto trace = sim::format_trace(run_with(s, Reply{200, R"({"result":"success"})"}).trace);
  EXPECT_NE(trace.find("attempt 1 not acked (HTTP 200: the body is not exactly \"success\"); retries in 4m"),
            std::string::npos)
      << trace;
  trace = sim::format_trace(run_with(s, Reply::fail()).trace);
  EXPECT_NE(trace.find("attempt 1 not acked (HTTP 500); retries in 4m"), std::string::npos) << trace;
  s.profile = "wechat-v2";
  trace = sim::format_trace(run_with(s, Reply{200, "<xml><return_code>FAIL</return_code></xml>"}).trace);
  EXPECT_NE(trace.find("not acked (HTTP 200: <return_code> is not SUCCESS)"), std::string::npos) << trace;
}

}  // namespace
}  // namespace twice

namespace twice {
namespace {

gateway::Scenario replay_scenario(const char* profile, Micros paid_at, Micros window) {
  auto s = testing::one_order_scenario();
  s.profile = profile;
  s.orders[0].paid_at = paid_at;
  s.attacks.replayed = 1;
  s.attacks.window = window;
  return s;
}

// fidelity finding 6: a replay re-sends a request the gateway really sent
// (its event id, after it was sent), not a payment notify of its own making.
TEST(Gateway, AReplayWaitsForARealNotifyAndResendsItWithItsOwnEventId) {
  const auto s = replay_scenario("wechat-v3", 20 * kSecond, 10 * kSecond);
  const auto r = testing::run_seed(s, "unique-key+cas", 1);
  EXPECT_TRUE(testing::invariants_of(r).empty());
  const auto trace = sim::format_trace(r.trace);
  const std::size_t waits = trace.find("an attacker has no notify to replay yet (the gateway sent none)");
  const std::size_t replays =
      trace.find("an attacker replays notify O-1 TRANSACTION.SUCCESS (evt-O-1), the request the gateway sent at");
  ASSERT_NE(waits, std::string::npos) << trace;
  ASSERT_NE(replays, std::string::npos) << trace;
  EXPECT_LT(waits, replays);
  EXPECT_LT(trace.find("sends notify O-1"), replays) << "replayed after it was sent";
  EXPECT_NE(trace.find("still within the signature's tolerance, a duplicate", replays), std::string::npos) << trace;
  EXPECT_EQ(trace.find("evt-attack"), std::string::npos) << trace;
}

// Stale past WeChat v3's 5 minutes: invalid, and a correct handler's
// verify() says why. A handler without a signature check that dedupes on
// the order's status ignores it: the payment was credited already.
TEST(Gateway, AReplayPastASignedTimestampsToleranceIsRefusedAndADedupingHandlerIgnoresIt) {
  const auto s = replay_scenario("wechat-v3", 0, 10 * kHour);
  for (const std::uint64_t seed : {1, 2, 3}) {
    const auto r = testing::run_seed(s, "unique-key+cas", seed);
    const auto trace = sim::format_trace(r.trace);
    if (trace.find("its signed timestamp is past the 5m tolerance; it must be refused") == std::string::npos) continue;
    EXPECT_TRUE(testing::invariants_of(r).empty()) << trace;
    EXPECT_NE(trace.find("verify signature of evt-O-1 -> signature timestamp is"), std::string::npos) << trace;
    EXPECT_TRUE(testing::invariants_of(testing::run_seed(s, "check-then-act", seed)).empty());
    return;
  }
  FAIL() << "no seed of 1..3 replayed past the tolerance";
}

// Alipay signs no time: a replay is a valid duplicate, never accepted_invalid;
// a handler without a dedupe credits it again (double_credit).
TEST(Gateway, AReplayWhereNoTimeIsSignedIsADuplicateNotAnInvalidNotify) {
  const auto s = replay_scenario("alipay", 0, kHour);
  const auto r = testing::run_seed(s, "unique-key+cas", 1);
  const auto trace = sim::format_trace(r.trace);
  EXPECT_TRUE(testing::invariants_of(r).empty()) << trace;
  EXPECT_NE(trace.find("alipay signs no time, so it is a valid duplicate"), std::string::npos) << trace;
  EXPECT_EQ(testing::invariants_of(testing::run_seed(s, "lock-only", 1)), std::vector<std::string>{"double_credit"});
  EXPECT_TRUE(gateway::verify("k", gateway::sign("k", gateway::kEpochSeconds, "{}"), "{}", 10 * kHour, 0).ok())
      << "no tolerance: an old signature still verifies";
}

}  // namespace
}  // namespace twice

namespace twice {
namespace {

// audit: the wrong-amount attack paid 1% of the amount, at least 1: on an
// order of amount 1 that is the amount itself, a valid notify, and a correct
// handler that credits it was flagged accepted_invalid in every run.
TEST(Gateway, AWrongAmountAttackNeverPaysTheOrdersAmount) {
  auto s = testing::one_order_scenario();
  s.orders[0].amount = 1;
  s.orders[0].paid_at = 20 * kSecond;  // the attack comes first: nothing is credited yet
  s.attacks.wrong_amount = 1;
  s.attacks.window = 5 * kSecond;
  for (const std::uint64_t seed : {1, 2, 3}) {
    const auto r = testing::run_seed(s, "unique-key+cas", seed);
    const auto trace = sim::format_trace(r.trace);
    EXPECT_TRUE(testing::invariants_of(r).empty()) << "seed " << seed << "\n" << trace;
    EXPECT_NE(trace.find("an attacker sends a wrong-amount notify: order O-1 paid 100 instead of the order's amount"),
              std::string::npos)
        << trace;
  }
  // An amount of 100 or more still gets its 1%, as before.
  s.orders[0].amount = 12000;
  const auto trace = sim::format_trace(testing::run_seed(s, "unique-key+cas", 1).trace);
  EXPECT_NE(trace.find("order O-1 paid 120 instead of the order's amount"), std::string::npos) << trace;
}

}  // namespace
}  // namespace twice

namespace twice {
namespace {

// audit: the unknown-order attack named its order O-UNKNOWN-N, which a
// scenario may hold: the "unknown" order was a real one, its notify valid.
TEST(Gateway, AnUnknownOrderAttackNamesNoOrderOfTheScenario) {
  auto s = testing::one_order_scenario();
  s.orders[0].order_no = "O-UNKNOWN-1";
  s.orders[0].paid = false;  // the attack's notify would be its first payment
  s.orders.push_back({"O-UNKNOWN-1-2", "bob", 100, "CNY", 0, false});
  s.attacks.unknown_order = 1;
  s.attacks.window = 5 * kSecond;
  for (const std::uint64_t seed : {1, 2, 3}) {
    const auto r = testing::run_seed(s, "unique-key+cas", seed);
    const auto trace = sim::format_trace(r.trace);
    EXPECT_TRUE(testing::invariants_of(r).empty()) << "seed " << seed << "\n" << trace;
    EXPECT_NE(trace.find("an attacker sends a unknown-order notify: order O-UNKNOWN-1-3 does not exist"),
              std::string::npos)
        << trace;
  }
}

}  // namespace
}  // namespace twice
