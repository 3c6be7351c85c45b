// The invariants through simulate(): tiny handlers that stop one step short of
// a violation, and one step past it. These cover what only a run can show
// (an ack seen before a commit, an invalid notify that committed, a task past
// its step budget) and that simulate() hands the checker what it needs (the
// transitions, the payload option). The database-level boundaries are in
// invariant_boundaries_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../support.h"
#include "sim/scheduler.h"
#include "sim/trace.h"

namespace twice {
namespace {

using testing::invariants_of;
using Names = std::vector<std::string>;

// Credits the order once, in one transaction: the smallest correct handler
// for a scenario with one delivery and no duplicates.
void credit_once(const Notify& n, Env& env) {
  env.db().exec("BEGIN IMMEDIATE");
  env.db().exec("UPDATE orders SET status = 'PAID' WHERE order_no = ?", {n.out_trade_no});
  env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
  env.db().exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {n.amount});
  env.db().exec("COMMIT");
}

template <class H>
run::RunResult run_tiny(const gateway::Scenario& s, std::uint64_t seed = 1) {
  static const HandlerInfo info{"tiny", "", [] { return std::make_unique<H>(); }};
  return run::simulate(run::RunSpec{&s, &info, {}, seed, std::nullopt}).value();
}

gateway::Scenario one_delivery() {
  auto s = testing::one_order_scenario();
  s.max_attempts = 1;
  return s;
}

TEST(InvariantInRun, TheSmallestCorrectHandlerPasses) {
  struct CreditsOnce final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      credit_once(n, env);
      return Reply::ack(n);
    }
  };
  const auto r = run_tiny<CreditsOnce>(one_delivery());
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.accounts.at(0).balance, 100);
}

// --- ack_before_commit: the gateway holds an ack while the credit is not committed.

TEST(InvariantInRun, AnAckSentAfterTheCommitIsNotEarly) {
  struct CommitsThenAnswersNow final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      credit_once(n, env);
      env.respond_now(Reply::ack(n));  // early in form, but the credit is already committed
      env.db().exec("SELECT 1");
      return Reply::ack(n);
    }
  };
  const auto r = run_tiny<CommitsThenAnswersNow>(one_delivery());
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
}

TEST(InvariantInRun, AnAckSentOneStatementBeforeTheCommitIsEarly) {
  struct AnswersBeforeCommit final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      env.db().exec("BEGIN IMMEDIATE");
      env.db().exec("UPDATE orders SET status = 'PAID' WHERE order_no = ?", {n.out_trade_no});
      env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
      env.db().exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {n.amount});
      env.respond_now(Reply::ack(n));
      env.db().exec("COMMIT");
      return Reply::ack(n);
    }
  };
  const auto r = run_tiny<AnswersBeforeCommit>(one_delivery());
  ASSERT_EQ(invariants_of(r), Names{"ack_before_commit"}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.violations[0].subject, "O-1");
}

// --- accepted_invalid: an invalid notify whose task committed a change to
// what the checker reads (the Schema's oracle queries) that the gateway's own
// ledger did not justify at that moment.

// Handles a genuine notify correctly; on a forged one (a bad signature) it
// writes a row no oracle query reads, then commits it or rolls it back.
template <bool commit>
struct WritesOnForgedNotify final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    if (env.verify(n).ok()) {
      const auto done = env.db().exec("SELECT status FROM orders WHERE order_no = ?", {n.out_trade_no});
      if (done.ok() && !done.rows.empty() && done.rows[0][0].as_text() == "WAIT_PAY") credit_once(n, env);
      return Reply::ack(n);
    }
    env.db().exec("BEGIN IMMEDIATE");
    env.db().exec("INSERT INTO processed_events(event_id, order_no) VALUES (?, ?)", {n.event_id, n.out_trade_no});
    env.db().exec(commit ? "COMMIT" : "ROLLBACK");
    return Reply::fail("bad signature");
  }
};

// Credits whatever notify it gets, forged or not, once per order.
struct CreditsEveryNotify final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    const auto done = env.db().exec("SELECT status FROM orders WHERE order_no = ?", {n.out_trade_no});
    if (done.ok() && !done.rows.empty() && done.rows[0][0].as_text() == "WAIT_PAY") credit_once(n, env);
    return Reply::ack(n);
  }
};

gateway::Scenario one_forgery() {
  auto s = one_delivery();
  s.attacks.forged_signature = 1;
  return s;
}

// The order is paid at once and every genuine notify is lost; a forged notify
// for it arrives within the minute. Only the forger's request reaches the
// handler, after the gateway settled the payment.
gateway::Scenario forged_after_pay() {
  auto s = one_delivery();
  s.request_loss = 1.0;
  s.attacks.forged_signature = 1;
  s.attacks.window = kMinute;
  s.orders[0].paid_at = 0;
  return s;
}

// The task of the run's invalid delivery committed a credit (its trace has
// the ledger row).
bool invalid_task_credited(const run::RunResult& r) {
  for (const auto& e : r.trace.events()) {
    const auto task = r.tasks.find(e.task);
    if (task != r.tasks.end() && task->second.name.starts_with("forged") && e.kind == sim::TraceKind::kSql &&
        e.text.starts_with("INSERT INTO ledger"))
      return true;
  }
  return false;
}

TEST(InvariantInRun, AnInvalidNotifyWhoseWritesAreRolledBackChangedNothing) {
  const auto r = run_tiny<WritesOnForgedNotify<false>>(one_forgery());
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
}

// An audit row of a rejected webhook is committed, but nothing the checker
// reads changed: no order, credit, status or balance.
TEST(InvariantInRun, AnInvalidNotifyThatCommitsOnlyARowTheCheckerDoesNotReadAcceptedNothing) {
  const auto r = run_tiny<WritesOnForgedNotify<true>>(one_forgery());
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
}

TEST(InvariantInRun, AnInvalidNotifyThatCreditsAnUnpaidOrderIsAcceptedInvalid) {
  auto s = one_forgery();
  s.orders[0].paid = false;  // the forger's target, never paid
  const auto r = run_tiny<CreditsEveryNotify>(s);
  ASSERT_EQ(invariants_of(r), Names{"accepted_invalid"}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.violations[0].subject, "O-1");
  EXPECT_NE(r.verdict.violations[0].detail.find("(credits 0 -> 1, status WAIT_PAY -> PAID, alice's balance 0 -> 100), "
                                                "and the gateway had settled no payment for O-1"),
            std::string::npos)
      << r.verdict.violations[0].detail;
}

// The payment is real and settled, but the task never asked the gateway: it
// credited the forger's claim, which only happened to be true.
TEST(InvariantInRun, AForgedNotifyCreditedAfterThePaymentWithoutAskingTheGatewayIsAcceptedInvalid) {
  const auto r = run_tiny<CreditsEveryNotify>(forged_after_pay());
  ASSERT_TRUE(invalid_task_credited(r)) << sim::format_trace(r.trace);
  ASSERT_EQ(invariants_of(r), Names{"accepted_invalid"}) << sim::format_trace(r.trace);
  EXPECT_NE(r.verdict.violations[0].detail.find("never asked the gateway about O-1"), std::string::npos)
      << r.verdict.violations[0].detail;
}

// Trusts nothing in a notify but its order number: asks the gateway what it
// settled (Env::query_payment) and credits that, once, in one transaction
// with a compare-and-swap on the status. With `notify_amount` it asks, but
// then credits the amount the notify claims.
template <bool notify_amount>
struct AsksTheGateway final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    const std::optional<Notify> paid = env.query_payment(n.out_trade_no);
    if (!paid) return Reply::fail("the gateway knows no payment");
    const std::int64_t amount = notify_amount ? n.amount : paid->amount;
    Db& db = env.db();
    db.exec("BEGIN IMMEDIATE");
    const auto swapped =
        db.exec("UPDATE orders SET status = 'PAID' WHERE order_no = ? AND status = 'WAIT_PAY'", {paid->out_trade_no});
    if (swapped.ok() && swapped.changes == 1) {
      db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {paid->out_trade_no, amount});
      db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {amount});
    }
    db.exec("COMMIT");
    return Reply::ack(n);
  }
};

// The forged notify's task credits the real, settled payment, once, as the
// gateway reported it: nothing the forger claimed was trusted.
TEST(InvariantInRun, AForgedNotifyWhoseTaskCreditsWhatTheGatewaySettledAcceptedNothing) {
  const auto r = run_tiny<AsksTheGateway<false>>(forged_after_pay());
  ASSERT_TRUE(invalid_task_credited(r)) << sim::format_trace(r.trace);
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.accounts.at(0).balance, 100);
}

// Asking the gateway does not excuse a change its ledger does not justify:
// a validly signed notify for 1% of the price, credited at its own amount.
TEST(InvariantInRun, AskingTheGatewayThenCreditingTheNotifysAmountIsAcceptedInvalid) {
  auto s = forged_after_pay();
  s.attacks.forged_signature = 0;
  s.attacks.wrong_amount = 1;
  const auto r = run_tiny<AsksTheGateway<true>>(s);
  ASSERT_EQ(invariants_of(r), Names{"accepted_invalid"}) << sim::format_trace(r.trace);
  EXPECT_NE(r.verdict.violations[0].detail.find("alice's balance moved by 1, not by the order's 100"),
            std::string::npos)
      << r.verdict.violations[0].detail;
}

// Logs every request it receives, valid or not, in an audit table of its own
// (an autocommit row), then handles it as the bundled unique-key+cas does. A
// rejected forgery leaves its audit row and nothing else.
struct AuditsEveryRequest final : Handler {
  static const Schema& audit_schema() {
    static const Schema s = [] {
      Schema x = reference_schema();
      x.setup_sql += "\nCREATE TABLE webhook_audit (id INTEGER PRIMARY KEY, event_id TEXT, order_no TEXT, payload TEXT);\n";
      x.postgres_setup_sql.clear();
      x.mariadb_setup_sql.clear();
      return x;
    }();
    return s;
  }
  Reply handle(const Notify& n, Env& env) override {
    env.db().exec("INSERT INTO webhook_audit(event_id, order_no, payload) VALUES (?, ?, ?)",
                  {n.event_id, n.out_trade_no, n.raw_payload});
    return inner->handle(n, env);
  }
  const Schema& schema() const override { return audit_schema(); }
  std::unique_ptr<Handler> inner = testing::handler("unique-key+cas").make();
};

TEST(InvariantInRun, AHandlerThatAuditsEveryRequestPassesForgedCallbacks) {
  const auto s = testing::bundled_scenario("forged-callbacks");
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto r = run_tiny<AuditsEveryRequest>(s, seed);
    int audited_invalid = 0;  // audit rows of the attackers' notifies, committed
    for (const auto& e : r.trace.events()) {
      const auto task = r.tasks.find(e.task);
      audited_invalid += task != r.tasks.end() && !task->second.name.starts_with("notify") &&
                         e.text.starts_with("INSERT INTO webhook_audit") && e.result == "1 row changed";
    }
    ASSERT_EQ(audited_invalid, 5) << "seed " << seed << "\n" << sim::format_trace(r.trace);
    EXPECT_EQ(invariants_of(r), Names{}) << "seed " << seed << "\n" << sim::format_trace(r.trace);
  }
}

// --- illegal_transition: simulate() gives the checker every status change.

TEST(InvariantInRun, AnOrderReopenedFromClosedAndCreditedIsAnIllegalTransition) {
  struct ClosesThenPays final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      env.db().exec("UPDATE orders SET status = 'CLOSED' WHERE order_no = ?", {n.out_trade_no});
      credit_once(n, env);
      return Reply::ack(n);
    }
  };
  const auto r = run_tiny<ClosesThenPays>(one_delivery());
  ASSERT_EQ(invariants_of(r), Names{"illegal_transition"}) << sim::format_trace(r.trace);
  EXPECT_NE(r.verdict.violations[0].detail.find("CLOSED -> PAID"), std::string::npos) << r.verdict.violations[0].detail;
}

TEST(InvariantInRun, AnOrderPaidThenRefundedMovedLegally) {
  struct PaysThenRefundsTheOrder final : Handler {
    Reply handle(const Notify& n, Env& env) override {
      credit_once(n, env);
      env.db().exec("UPDATE orders SET status = 'REFUNDED' WHERE order_no = ?", {n.out_trade_no});
      return Reply::ack(n);
    }
  };
  const auto r = run_tiny<PaysThenRefundsTheOrder>(one_delivery());
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
}

// --- payload_missing: simulate() passes the scenario's requirement on.

TEST(InvariantInRun, AHandlerThatKeepsNoPayloadFailsOnlyWhereThePayloadIsRequired) {
  auto s = one_delivery();
  EXPECT_EQ(invariants_of(testing::run_seed(s, "cas", 1)), Names{});
  s.payload_required = true;
  const auto r = testing::run_seed(s, "cas", 1);
  ASSERT_EQ(invariants_of(r), Names{"payload_missing"});
  EXPECT_EQ(invariants_of(testing::run_seed(s, "unique-key+cas", 1)), Names{}) << "it stores the payload";
}

// --- lost_update, both ways, from a handler.

template <int extra>
struct BalanceOffBy final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    env.db().exec("BEGIN IMMEDIATE");
    env.db().exec("UPDATE orders SET status = 'PAID' WHERE order_no = ?", {n.out_trade_no});
    env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, n.amount});
    env.db().exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {n.amount + extra});
    env.db().exec("COMMIT");
    return Reply::ack(n);
  }
};

TEST(InvariantInRun, ABalanceOffItsLedgerEitherWayIsALostUpdate) {
  EXPECT_EQ(invariants_of(run_tiny<BalanceOffBy<0>>(one_delivery())), Names{});
  const auto above = run_tiny<BalanceOffBy<1>>(one_delivery());
  EXPECT_EQ(invariants_of(above), Names{"lost_update"});
  EXPECT_EQ(above.verdict.accounts.at(0).balance, 101);
  const auto below = run_tiny<BalanceOffBy<-1>>(one_delivery());
  EXPECT_EQ(invariants_of(below), Names{"lost_update"});
  EXPECT_EQ(below.verdict.accounts.at(0).balance, 99);
}

// --- wrong_amount: credited once, to the ledger and the balance alike, but
// not what was paid (a unit bug: the amount in yuan where the ledger keeps fen).

template <int divide_by>
struct CreditsDividedBy final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    const std::int64_t amount = n.amount / divide_by;
    env.db().exec("BEGIN IMMEDIATE");
    env.db().exec("UPDATE orders SET status = 'PAID' WHERE order_no = ?", {n.out_trade_no});
    env.db().exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, 'alice', ?)", {n.out_trade_no, amount});
    env.db().exec("UPDATE accounts SET balance = balance + ? WHERE user_id = 'alice'", {amount});
    env.db().exec("COMMIT");
    return Reply::ack(n);
  }
};

TEST(InvariantInRun, ACreditOfTheWrongAmountToLedgerAndBalanceAlikeIsAWrongAmount) {
  EXPECT_EQ(invariants_of(run_tiny<CreditsDividedBy<1>>(one_delivery())), Names{});
  const auto r = run_tiny<CreditsDividedBy<100>>(one_delivery());
  EXPECT_EQ(invariants_of(r), Names{"wrong_amount"}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.accounts.at(0).balance, 1);
  EXPECT_EQ(r.verdict.accounts.at(0).should_be, 100);
}

// The canary that keeps wrong_amount in the bundled matrix: the recommended
// design crediting amount / 100. At seed 1 two network copies overlap the
// first delivery; the dedupe holds, so the one credit is the only thing wrong.
TEST(InvariantInRun, TheAmountInYuanCanaryIsAWrongAmountOnConcurrentDuplicates) {
  const auto s = testing::bundled_scenario("concurrent-duplicates");
  const auto r = testing::run_seed(s, "amount-in-yuan", 1);
  const std::string trace = sim::format_trace(r.trace);
  EXPECT_NE(trace.find("(network copy)"), std::string::npos) << trace;
  EXPECT_EQ(invariants_of(r), Names{"wrong_amount"}) << trace;
  ASSERT_EQ(r.verdict.accounts.size(), 1u);
  EXPECT_EQ(r.verdict.accounts.at(0).balance, 120);
  EXPECT_EQ(r.verdict.accounts.at(0).ledger_sum, 120);
  EXPECT_EQ(r.verdict.accounts.at(0).should_be, 12000);
  // The same run with the notify's own amount credited passes.
  EXPECT_EQ(invariants_of(testing::run_seed(s, "unique-key+cas", 1)), Names{});
}

// --- stuck: a task killed past its step budget; one statement less is not.

// Credits once, then runs `selects` more statements before answering.
template <int selects>
struct BusyAfterCredit final : Handler {
  Reply handle(const Notify& n, Env& env) override {
    credit_once(n, env);
    for (int i = 0; i < selects; ++i) env.db().exec("SELECT 1");
    return Reply::ack(n);
  }
};

// credit_once() makes 5 scheduling points; the task's first run is one more.
constexpr int kBudget = sim::SchedulerLimits{}.task_step_budget;
constexpr int kSelectsAtBudget = kBudget - 5 - 1;

TEST(InvariantInRun, ATaskAtItsStepBudgetIsNotStuck) {
  const auto r = run_tiny<BusyAfterCredit<kSelectsAtBudget>>(one_delivery());
  EXPECT_EQ(invariants_of(r), Names{});
  EXPECT_EQ(r.steps, kBudget);
}

TEST(InvariantInRun, ATaskOneStepPastItsBudgetIsStuck) {
  const auto r = run_tiny<BusyAfterCredit<kSelectsAtBudget + 1>>(one_delivery());
  // Killed before its answer: the gateway's one attempt timed out, and the
  // credit it committed first is still there, so no payment is lost.
  ASSERT_EQ(invariants_of(r), Names{"stuck"});
  EXPECT_NE(r.verdict.violations[0].detail.find(fmt::format("(budget {})", kBudget)), std::string::npos)
      << r.verdict.violations[0].detail;
}

}  // namespace
}  // namespace twice
