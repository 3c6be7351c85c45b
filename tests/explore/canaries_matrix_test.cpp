// Each broken variant is caught on its bundled scenario with its named
// violation, and its counterexample shrinks to the steps that matter (the
// crash point included, where there is one).
#include <gtest/gtest.h>

#include "../support.h"
#include "explore/explorer.h"

namespace twice {
namespace {

struct Canary {
  const char* handler;
  const char* scenario;
  const char* invariant;
  bool crash;  // the counterexample must show where the process died
  int max_steps = 40;  // incidents that play out over a retry schedule are longer
};

class CanaryTest : public ::testing::TestWithParam<Canary> {};

TEST_P(CanaryTest, IsCaughtAndShrinks) {
  const Canary c = GetParam();
  const gateway::Scenario s = testing::bundled_scenario(c.scenario);
  explore::ExploreOptions o;
  o.seeds = 300;
  o.shrink_budget = 300;
  o.stop_at_first_failure = true;
  o.stop_at_invariant = c.invariant;
  const auto cell = explore::explore_cell(s, testing::handler(c.handler), o, {});
  const explore::ViolationResult* v = nullptr;
  for (const auto& x : cell.violations)
    if (x.invariant == c.invariant) v = &x;
  ASSERT_NE(v, nullptr) << c.handler << " on " << c.scenario << " never showed " << c.invariant;
  const auto& cex = v->counterexample;
  EXPECT_FALSE(cex.rows.empty());
  EXPECT_LE(cex.steps, c.max_steps) << "a counterexample a person can follow";
  if (c.crash) {
    bool shows_crash = false;
    for (const auto& row : cex.rows) shows_crash |= row.text.find("process crashes before") != std::string::npos;
    EXPECT_TRUE(shows_crash) << "the crash point is part of the counterexample";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bundled, CanaryTest,
    ::testing::Values(Canary{"unique-key-no-txn", "crash-mid-handler", "lost_payment", true},
                      Canary{"check-then-act", "crash-mid-handler", "lost_update", true},
                      Canary{"ack-before-commit", "sequential-duplicates", "ack_before_commit", false},
                      Canary{"lock-release-any", "lock-ttl-expiry", "double_credit", false},
                      Canary{"lock-check", "lock-ttl-expiry", "double_credit", false},
                      Canary{"event-id-dedupe", "second-signal", "double_credit", false},
                      Canary{"no-amount-check", "forged-callbacks", "accepted_invalid", false},
                      Canary{"amount-in-yuan", "concurrent-duplicates", "wrong_amount", false},
                      Canary{"false-success", "concurrent-duplicates", "ack_before_commit", false},
                      Canary{"json-ack-rebate", "alipay-json-ack", "double_credit", false, 100},
                      Canary{"throw-on-repaid", "paid-twice", "lost_payment", false, 100},
                      Canary{"check-then-act", "slow-handler-retry", "double_credit", false},
                      Canary{"check-then-act", "stripe-concurrent-events", "double_credit", false},
                      Canary{"no-event-check", "alipay-trade-closed", "unpaid_credit", false},
                      Canary{"no-event-check", "stripe-refunds", "lost_refund", false},
                      Canary{"refund-check-then-act", "stripe-refunds", "double_refund", false}),
    [](const auto& info) {
      std::string name = std::string(info.param.handler) + "_" + info.param.scenario;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

}  // namespace
}  // namespace twice
