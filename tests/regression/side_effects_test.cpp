// Each side-effect bug class, forced by a service that always misbehaves the
// same way (rate 1: no choice to search), beside the matrix that finds it by
// search: a timeout after shipping turns a call inside the transaction into a
// second shipment; a service that is down at the one moment call-after-commit
// calls loses the shipment; the outbox's relay, answered only with timeouts,
// ships once under its key. And the whole wiring: a handler's own job runs,
// the services' record reaches the checker and the transcript's lanes.
#include <gtest/gtest.h>

#include "../support.h"
#include "explore/transcript.h"
#include "impl/recommended.h"
#include "sim/trace.h"

namespace twice {
namespace {

using testing::invariants_of;
using Names = std::vector<std::string>;

gateway::Scenario shipping(void (*configure)(gateway::ServiceSpec& warehouse)) {
  auto s = testing::one_order_scenario();
  s.services = gateway::builtin_services();
  configure(s.services[0]);
  s.required_effects = {"ship", "mail", "decrement"};
  return s;
}

int shipments(const run::RunResult& r) {
  int n = 0;
  for (const auto& e : r.effects) n += e.effect == "ship";
  return n;
}

TEST(SideEffects, CallInTxnShipsAgainAfterATimeoutThatCameAfterTheShipment) {
  const auto s = shipping([](gateway::ServiceSpec& w) { w.timeout = 1.0; });
  const auto r = testing::run_seed(s, "call-in-txn", 1);
  // Every answer is a timeout, so the payment never commits: each attempt of
  // the gateway ships once more, for a payment the merchant never keeps.
  EXPECT_EQ(invariants_of(r), (Names{"duplicate_effect", "effect_without_payment", "lost_payment"}))
      << sim::format_trace(r.trace);
  EXPECT_GE(shipments(r), 2) << "each retry of the delivery ships again";
}

TEST(SideEffects, CallAfterCommitLosesTheShipmentWhenTheWarehouseIsDownThen) {
  const auto s = shipping([](gateway::ServiceSpec& w) { w.unavailable = 1.0; });
  const auto r = testing::run_seed(s, "call-after-commit", 1);
  EXPECT_EQ(invariants_of(r), Names{"lost_effect"}) << sim::format_trace(r.trace);
  EXPECT_EQ(shipments(r), 0);
}

TEST(SideEffects, TheOutboxShipsOnceUnderItsKeyThoughEveryAnswerIsATimeout) {
  const auto s = shipping([](gateway::ServiceSpec& w) { w.timeout = 1.0; });
  const auto r = testing::run_seed(s, "outbox", 1);
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
  EXPECT_EQ(shipments(r), 1);
  bool replayed = false;
  for (const auto& e : r.trace.events())
    replayed |= e.kind == sim::TraceKind::kService && e.result.find("replayed") != std::string::npos;
  EXPECT_TRUE(replayed) << "the relay asked again, and the key answered";
}

TEST(SideEffects, WithoutKeysTheSameOutboxShipsTwice) {
  const auto s = shipping([](gateway::ServiceSpec& w) {
    w.timeout = 1.0;
    w.idempotency_keys = false;
  });
  const auto r = testing::run_seed(s, "outbox", 1);
  EXPECT_EQ(invariants_of(r), Names{"duplicate_effect"}) << sim::format_trace(r.trace);
}

TEST(SideEffects, AHandlerThatCallsNoServiceLosesEveryRequiredEffect) {
  const auto s = shipping([](gateway::ServiceSpec&) {});
  EXPECT_EQ(invariants_of(testing::run_seed(s, "unique-key+cas", 1)),
            (Names{"lost_effect", "lost_effect", "lost_effect"}))
      << "ship, mail and decrement";
  EXPECT_EQ(invariants_of(testing::run_seed(s, "idempotency-key", 1)), Names{});
}

TEST(SideEffects, TheTranscriptGivesTheServiceALaneAndListsEffectsPerOrder) {
  const auto s = shipping([](gateway::ServiceSpec& w) { w.timeout = 1.0; });
  const auto r = testing::run_seed(s, "call-in-txn", 1);
  ASSERT_TRUE(r.has("duplicate_effect"));
  check::Violation v;
  for (const auto& x : r.verdict.violations)
    if (x.invariant == "duplicate_effect") v = x;
  explore::Counterexample cex;
  explore::build_transcript(r, s, v, cex);
  EXPECT_NE(std::find(cex.columns.begin(), cex.columns.end(), "warehouse (service)"), cex.columns.end());
  bool ship_listed_twice = false;
  for (const auto& e : cex.effects) ship_listed_twice |= e.effect == "ship" && e.applied.size() >= 2 && e.required;
  EXPECT_TRUE(ship_listed_twice);
}

// A user's own service, declared by the scenario, called by name; its
// faults come from the scenario too. The handler pays the referral once per
// credited order, under a key: a timeout after paying changes nothing.
TEST(SideEffects, AUsersOwnServiceIsCalledByNameAndJudgedLikeTheBuiltInOnes) {
  struct PaysReferral final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      bool credited = false;
      impl::ApplyOptions options;
      options.credited = &credited;
      const Reply reply = impl::apply_once(n, env, options);
      for (int attempt = 0; credited && attempt < 5; ++attempt)
        if (env.call("referrals", {"pay_referral", n.out_trade_no, "referrer bob", n.out_trade_no}).ok()) break;
      return reply;
    }
  };
  static const HandlerInfo info{"pays-referral", "", [] { return std::make_unique<PaysReferral>(); }};
  auto s = testing::one_order_scenario();
  s.services = gateway::builtin_services();
  gateway::ServiceSpec referrals;
  referrals.name = "referrals";
  referrals.effects = {"pay_referral"};
  referrals.timeout = 0.5;
  s.services.push_back(referrals);
  s.required_effects = {"pay_referral"};
  int timeouts = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto r = run::simulate(run::RunSpec{&s, &info, {}, seed, std::nullopt}).value();
    EXPECT_EQ(invariants_of(r), Names{}) << "seed " << seed << "\n" << sim::format_trace(r.trace);
    ASSERT_EQ(r.effects.size(), 1u);
    EXPECT_EQ(r.effects[0].service, "referrals");
    for (const auto& e : r.trace.events()) timeouts += e.kind == sim::TraceKind::kFault;
  }
  EXPECT_GT(timeouts, 0) << "the scenario's own fault rates reach its own service";
  // Without keys honoured, the same handler pays twice after a timeout.
  s.services.back().idempotency_keys = false;
  bool twice = false;
  for (std::uint64_t seed = 1; seed <= 20 && !twice; ++seed)
    twice = run::simulate(run::RunSpec{&s, &info, {}, seed, std::nullopt}).value().has("duplicate_effect");
  EXPECT_TRUE(twice);
}

}  // namespace
}  // namespace twice
