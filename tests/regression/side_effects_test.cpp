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
    replayed |= e.kind == sim::EventKind::kService && e.result.find("replayed") != std::string::npos;
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

}  // namespace
}  // namespace twice
