// One named regression test per bug class, forcing the interleaving by hand
// (scripted schedule, RocksDB sync-point style) beside the property that finds
// it by search. Task ids: T1 is the gateway's request, T2 the network's copy
// (or the second order's notify).
#include <algorithm>

#include <gtest/gtest.h>

#include "../support.h"

namespace twice {
namespace {

using testing::invariants_of;
using testing::run_script;

// check-then-act: T1 SELECT, T2 SELECT (both see WAIT_PAY), then both write.
TEST(Regression, CheckThenActDoubleCreditsWhenBothReadBeforeEitherWrites) {
  const auto s = testing::concurrent_copies_scenario(1);
  const auto r = run_script(s, "check-then-act", {1, 1, 2, 2});
  EXPECT_EQ(invariants_of(r), std::vector<std::string>{"double_credit"}) << sim::format_trace(r.trace);
  const auto t2 = testing::steps_of(r, 2);
  ASSERT_GE(t2.size(), 2u);
  EXPECT_NE(t2[1].find("status='WAIT_PAY'"), std::string::npos) << t2[1];
}

TEST(Regression, CheckThenActIsSafeWhenTheFirstFinishesFirst) {
  const auto s = testing::concurrent_copies_scenario(1);
  const auto r = run_script(s, "check-then-act", {1, 1, 1, 1, 1, 1, 1, 2});
  EXPECT_TRUE(r.verdict.violations.empty()) << sim::format_trace(r.trace);
}

// The same forced interleaving cannot break the defended designs.
TEST(Regression, DefendedHandlersSurviveTheCheckThenActInterleaving) {
  const auto s = testing::concurrent_copies_scenario(1);
  for (const char* h : {"unique-key", "cas", "unique-key+cas", "three-layer", "lock-check"}) {
    const auto r = run_script(s, h, {1, 1, 2, 2, 1, 2, 1, 2, 1, 2});
    EXPECT_TRUE(r.verdict.violations.empty()) << h << "\n" << sim::format_trace(r.trace);
  }
}

// read-modify-write: both read balance 0 before either writes; the second write wins.
TEST(Regression, ReadModifyWriteLosesAnUpdateWhenBothReadTheOldBalance) {
  const auto s = testing::two_topups_scenario();
  // T1 starts, loads its order, reads the balance; T2 the same; then each runs to the end.
  const auto r = run_script(s, "read-modify-write", {1, 1, 1, 2, 2, 2});
  ASSERT_EQ(invariants_of(r), std::vector<std::string>{"lost_update"}) << sim::format_trace(r.trace);
  ASSERT_EQ(r.verdict.accounts.size(), 1u);
  EXPECT_EQ(r.verdict.accounts[0].ledger_sum, 150);
  // T2 wrote 0 + 50, then T1 wrote 0 + 100 over it: T2's credit is gone from the balance.
  EXPECT_EQ(r.verdict.accounts[0].balance, 100);
}

// lock-only: the ack is lost; the retry 15 s later takes the released lock and credits again.
TEST(Regression, LockOnlyCreditsARetryAfterTheLockIsReleased) {
  auto s = testing::one_order_scenario();
  s.ack_loss = 1.0;
  s.max_attempts = 2;
  const auto r = run_script(s, "lock-only", {});
  EXPECT_EQ(invariants_of(r), std::vector<std::string>{"double_credit"}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.credits_per_order.at("O-1"), 2);
}

TEST(Regression, UniqueKeyCasAcksTheRetryWithoutCreditingAgain) {
  auto s = testing::one_order_scenario();
  s.ack_loss = 1.0;
  s.max_attempts = 3;
  const auto r = run_script(s, "unique-key+cas", {});
  EXPECT_TRUE(r.verdict.violations.empty()) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.credits_per_order.at("O-1"), 1);
}

// refund-check-then-act: the payment (T1, its copy T2) runs to the end; then
// the refund's two copies T3 and T4 both read PAID before either writes
// REFUNDED, and both take the credit back.
TEST(Regression, RefundCheckThenActRefundsTwiceWhenBothCopiesReadPaid) {
  auto s = testing::concurrent_copies_scenario(1);
  s.orders[0].refund_after = kMinute;
  // T3: verify, SELECT; T4: verify, SELECT; then each runs to the end.
  const auto r = run_script(s, "refund-check-then-act", {3, 3, 3, 4, 4, 4});
  ASSERT_EQ(invariants_of(r), std::vector<std::string>{"double_refund"}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.accounts[0].balance, -100);
  for (int task : {3, 4}) {
    const auto steps = testing::steps_of(r, task);
    const auto select = std::find_if(steps.begin(), steps.end(), [](const std::string& st) {
      return st.find("SELECT user_id") != std::string::npos;
    });
    ASSERT_NE(select, steps.end()) << task;
    EXPECT_NE(select->find("status='PAID'"), std::string::npos) << *select;
  }
  // The defended handlers take the same interleaving in their stride.
  for (const char* h : {"cas", "unique-key+cas", "three-layer"}) {
    const auto ok = run_script(s, h, {3, 3, 3, 4, 4, 4});
    EXPECT_TRUE(ok.verdict.violations.empty()) << h << "\n" << sim::format_trace(ok.trace);
    EXPECT_EQ(ok.verdict.accounts[0].balance, 0) << h;
  }
}

}  // namespace
}  // namespace twice
