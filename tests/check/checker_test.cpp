// The checker judges by the database and the gateway's ledger, never by what
// the handler replies. These handlers lie.
#include <gtest/gtest.h>

#include "../support.h"

namespace twice {
namespace {

// Credits twice in one delivery and answers FAIL, as if nothing happened.
class CreditsTwiceAndSaysFail final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    for (int i = 0; i < 2; ++i) {
      env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
      env.db().exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {n.amount});
    }
    return Reply::fail("nothing to see here");
  }
};

// Answers success and credits nothing.
class SaysSuccessCreditsNothing final : public Handler {
 public:
  Reply handle(const Notify&, Env&) override { return Reply::success(); }
};

// Writes a ledger row but not the balance.
class LedgerOnly final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
    return Reply::success();
  }
};

template <class H>
run::RunResult run_liar() {
  static const HandlerInfo info{"liar", "", [] { return std::make_unique<H>(); }};
  auto s = testing::one_order_scenario();
  s.max_attempts = 2;
  return run::simulate(run::RunSpec{&s, &info, {}, 3, std::nullopt});
}

TEST(Checker, CatchesADoubleCreditWhateverTheHandlerReplies) {
  const auto r = run_liar<CreditsTwiceAndSaysFail>();
  ASSERT_FALSE(r.verdict.violations.empty());
  EXPECT_EQ(r.verdict.violations[0].invariant, "double_credit");
  EXPECT_EQ(r.verdict.violations[0].subject, "O-1");
  // FAIL made the gateway retry, so it is worse than twice: 2 attempts x 2 credits.
  EXPECT_EQ(r.verdict.credits_per_order.at("O-1"), 4);
  EXPECT_EQ(testing::invariants_of(r), std::vector<std::string>{"double_credit"}) << "balance matches the ledger";
}

TEST(Checker, AnAckWithoutACreditIsALostPaymentAndAnAckBeforeCommit) {
  const auto r = run_liar<SaysSuccessCreditsNothing>();
  EXPECT_EQ(testing::invariants_of(r), (std::vector<std::string>{"ack_before_commit", "lost_payment"}));
}

TEST(Checker, ABalanceThatDisagreesWithTheLedgerIsALostUpdate) {
  const auto r = run_liar<LedgerOnly>();
  ASSERT_EQ(testing::invariants_of(r), std::vector<std::string>{"lost_update"});
  ASSERT_EQ(r.verdict.accounts.size(), 1u);
  EXPECT_EQ(r.verdict.accounts[0].balance, 0);
  EXPECT_EQ(r.verdict.accounts[0].ledger_sum, 100);
  EXPECT_EQ(r.verdict.accounts[0].should_be, 100);
}

TEST(Checker, ACorrectRunHasNoViolationAndTheBalanceItShouldHave) {
  const auto r = testing::run_seed(testing::concurrent_copies_scenario(3), "unique-key+cas", 9);
  EXPECT_TRUE(r.verdict.violations.empty());
  ASSERT_EQ(r.verdict.accounts.size(), 1u);
  EXPECT_EQ(r.verdict.accounts[0].balance, 100);
  EXPECT_EQ(r.verdict.accounts[0].should_be, 100);
}

TEST(Checker, AHandlerThatThrowsAnswers500AndIsRetried) {
  struct Throws final : Handler {
    Reply handle(const Notify&, Env&) override { throw std::runtime_error("boom"); }
  };
  static const HandlerInfo info{"throws", "", [] { return std::make_unique<Throws>(); }};
  auto s = testing::one_order_scenario();
  s.max_attempts = 3;
  const auto r = run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt});
  const auto trace = sim::format_trace(r.trace);
  EXPECT_NE(trace.find("handler threw: boom"), std::string::npos) << trace;
  EXPECT_NE(trace.find("not acked (HTTP 500); retries in 15s"), std::string::npos) << trace;
  // Never acked: the gateway gave up, and the payment it settled is lost.
  EXPECT_EQ(testing::invariants_of(r), std::vector<std::string>{"lost_payment"});
  EXPECT_NE(r.verdict.violations[0].detail.find("never acked"), std::string::npos);
}

TEST(Checker, AHandlerThatNeverReturnsIsStuck) {
  struct Spins final : Handler {
    Reply handle(const Notify&, Env& env) override {
      for (;;) env.db().exec("SELECT 1");
    }
  };
  static const HandlerInfo info{"spins", "", [] { return std::make_unique<Spins>(); }};
  auto s = testing::one_order_scenario();
  s.max_attempts = 1;
  const auto r = run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt});
  // Killed, it never answered: the gateway's one attempt failed and the payment is lost too.
  EXPECT_EQ(testing::invariants_of(r), (std::vector<std::string>{"lost_payment", "stuck"}));
}

}  // namespace
}  // namespace twice
