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

// --- accepted_invalid: an invalid notify whose writes were committed.

// Handles a genuine notify correctly; on a forged one (a bad signature) it
// writes a row, then commits it or rolls it back.
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

gateway::Scenario one_forgery() {
  auto s = one_delivery();
  s.attacks.forged_signature = 1;
  return s;
}

TEST(InvariantInRun, AnInvalidNotifyWhoseWritesAreRolledBackChangedNothing) {
  const auto r = run_tiny<WritesOnForgedNotify<false>>(one_forgery());
  EXPECT_EQ(invariants_of(r), Names{}) << sim::format_trace(r.trace);
}

TEST(InvariantInRun, AnInvalidNotifyThatCommitsOneRowIsAcceptedInvalid) {
  const auto r = run_tiny<WritesOnForgedNotify<true>>(one_forgery());
  ASSERT_EQ(invariants_of(r), Names{"accepted_invalid"}) << sim::format_trace(r.trace);
  EXPECT_EQ(r.verdict.violations[0].subject, "O-1");
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
