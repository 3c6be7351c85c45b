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
  return run::simulate(run::RunSpec{&s, &info, {}, 3, std::nullopt}).value();
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

TEST(Checker, AnAckForAPaymentNeverKeptIsALostPaymentNotAnEarlyAck) {
  const auto r = run_liar<SaysSuccessCreditsNothing>();
  EXPECT_EQ(testing::invariants_of(r), std::vector<std::string>{"lost_payment"});
}

// Answers at once, then does its work in the same request, and forgets it.
class AnswersFirstCreditsNothing final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    env.respond_now(Reply::ack(n));
    env.db().exec("SELECT 1");
    return Reply::ack(n);
  }
};

TEST(Checker, AnAckSentBeforeTheHandlerFinishedIsAnAckBeforeCommitEvenIfNothingCommits) {
  const auto r = run_liar<AnswersFirstCreditsNothing>();
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
  const auto r = run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt}).value();
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
  const auto r = run::simulate(run::RunSpec{&s, &info, {}, 1, std::nullopt}).value();
  // Killed, it never answered: the gateway's one attempt failed and the payment is lost too.
  EXPECT_EQ(testing::invariants_of(r), (std::vector<std::string>{"lost_payment", "stuck"}));
}

// Refunds and closes. Each case below is a handler that answers "success" to
// everything and does one thing wrong; the checker must name that thing.

gateway::Scenario refunded_order_scenario() {
  auto s = testing::one_order_scenario();
  s.orders[0].refund_after = kMinute;
  s.max_attempts = 2;
  return s;
}

template <class H>
run::RunResult run_on(const gateway::Scenario& s) {
  static const HandlerInfo info{"refund-liar", "", [] { return std::make_unique<H>(); }};
  return run::simulate(run::RunSpec{&s, &info, {}, 3, std::nullopt}).value();
}

// Credits payments through the recommended path and takes back each refund
// it is sent, `times` times over.
template <int times>
class ReversesTimes final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kRefunded) return testing::handler("unique-key+cas").make()->handle(n, env);
    for (int i = 0; i < times; ++i) {
      env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)",
                    {n.out_trade_no, -n.refund_amount});
      env.db().exec("UPDATE accounts SET balance = balance - ? WHERE user_id = 'alice'", {n.refund_amount});
    }
    env.db().exec("UPDATE orders SET status = 'REFUNDED' WHERE order_no = ?", {n.out_trade_no});
    return Reply::ack(n);
  }
};

TEST(Checker, ARefundTakenBackOnceIsRight) {
  const auto r = run_on<ReversesTimes<1>>(refunded_order_scenario());
  EXPECT_TRUE(r.verdict.violations.empty()) << r.verdict.violations[0].detail;
  ASSERT_EQ(r.verdict.accounts.size(), 1u);
  EXPECT_EQ(r.verdict.accounts[0].balance, 0);
  EXPECT_EQ(r.verdict.accounts[0].should_be, 0) << "a refunded payment is not owed to the user";
}

TEST(Checker, ARefundNeverTakenBackIsALostRefund) {
  const auto r = run_on<ReversesTimes<0>>(refunded_order_scenario());
  ASSERT_EQ(testing::invariants_of(r), std::vector<std::string>{"lost_refund"});
  EXPECT_NE(r.verdict.violations[0].detail.find("still holds its credit"), std::string::npos);
}

TEST(Checker, ARefundTakenBackTwiceIsADoubleRefund) {
  const auto r = run_on<ReversesTimes<2>>(refunded_order_scenario());
  ASSERT_EQ(testing::invariants_of(r), std::vector<std::string>{"double_refund"});
  EXPECT_NE(r.verdict.violations[0].detail.find("taken back 2 times"), std::string::npos)
      << r.verdict.violations[0].detail;
}

TEST(Checker, ACreditTakenBackWithoutARefundIsADoubleRefund) {
  struct ReversesEveryPayment final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      const Reply r = testing::handler("unique-key+cas").make()->handle(n, env);
      env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, -n.amount});
      env.db().exec("UPDATE accounts SET balance = balance - ? WHERE user_id = 'alice'", {n.amount});
      return r;
    }
  };
  auto s = testing::one_order_scenario();
  s.max_attempts = 1;
  const auto r = run_on<ReversesEveryPayment>(s);
  // Both are true: the payment is no longer held, and the reversal had no refund behind it.
  EXPECT_EQ(testing::invariants_of(r), (std::vector<std::string>{"double_refund", "lost_payment"}));
}

TEST(Checker, ACreditForATradeTheGatewayClosedIsAnUnpaidCredit) {
  auto s = testing::one_order_scenario();
  s.profile = "alipay";
  s.orders[0].paid = false;
  s.orders[0].closed_at = 15 * kMinute;
  s.max_attempts = 1;
  const auto r = testing::run_seed(s, "no-event-check", 1);
  ASSERT_EQ(testing::invariants_of(r), std::vector<std::string>{"unpaid_credit"});
  EXPECT_NE(r.verdict.violations[0].detail.find("(it closed the trade)"), std::string::npos)
      << r.verdict.violations[0].detail;
  // The recommended handler closes the order instead.
  const auto ok = testing::run_seed(s, "unique-key+cas", 1);
  EXPECT_TRUE(ok.verdict.violations.empty());
}

TEST(Checker, ARefundThatOvertakesItsPaymentIsRefusedAndRetriedNotLost) {
  // The first payment notify fails (a deploy, say); Stripe retries it a minute
  // later, so the refund, settled a second after the payment, arrives first.
  struct FirstPaymentFails final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      if (event_kind(n) == EventKind::kPaid && first_) {
        first_ = false;
        return Reply::fail("deploying");
      }
      return inner_->handle(n, env);
    }
    bool first_ = true;
    std::unique_ptr<Handler> inner_ = testing::handler("unique-key+cas").make();
  };
  auto s = testing::one_order_scenario();
  s.profile = "stripe";
  s.orders[0].refund_after = kSecond;
  const auto r = run_on<FirstPaymentFails>(s);
  const std::string trace = sim::format_trace(r.trace);
  EXPECT_NE(trace.find("replies HTTP 500 {\"code\":\"FAIL\",\"message\":\"refund before its payment"), std::string::npos)
      << trace;
  EXPECT_TRUE(r.verdict.violations.empty()) << r.verdict.violations[0].detail;
  EXPECT_EQ(r.verdict.accounts[0].balance, 0);
}

}  // namespace
}  // namespace twice
