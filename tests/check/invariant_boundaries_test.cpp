// Every invariant at its boundary and on both sides of it, on a database
// written by hand (PreparedDatabase): the last state that must pass and the
// first that must fail. A checker condition moved by one (n > 1 made n > 2,
// != made <) or dropped fails one of these. The invariants observed during a
// run (ack_before_commit, accepted_invalid, stuck) and the end-to-end wiring
// of the others are tested through simulate() in invariants_in_runs_test.cpp.
#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "check/invariants/during_run.h"
#include "check/violation.h"
#include "env/sqlite_db.h"
#include "prepared_database.h"
#include "twice/schema.h"

namespace twice {
namespace {

using testing::names_of;
using testing::PreparedDatabase;
using Names = std::vector<std::string>;

gateway::OrderSpec order(const std::string& no = "O-1", const std::string& user = "alice", std::int64_t amount = 100) {
  return gateway::OrderSpec{no, user, amount, "CNY", 0};
}

gateway::OrderSpec unpaid(const std::string& no = "O-1") {
  auto o = order(no);
  o.paid = false;
  return o;
}

TEST(InvariantBoundary, EveryInvariantHasABoundaryTestHere) {
  // A new invariant lands with its boundary tests: this list says which exist.
  const Names tested = {"double_credit",    "lost_update",        "wrong_amount",    "lost_payment",    "ack_before_commit",
                        "accepted_invalid", "illegal_transition", "lost_refund",     "double_refund",
                        "unpaid_credit",    "payload_missing",    "duplicate_effect", "lost_effect",
                        "effect_without_payment", "stuck",        "oracle_error",
                        "job_failed"};
  Names listed;
  for (const auto& i : check::invariants()) listed.push_back(std::string(i.name));
  EXPECT_EQ(listed, tested);
}

// --- double_credit: more than one credit for one order.

TEST(InvariantBoundary, OneCreditIsNotADoubleCredit) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  const auto v = db.check();
  EXPECT_EQ(names_of(v), Names{});
  EXPECT_EQ(v.credits_per_order.at("O-1"), 1);
}

TEST(InvariantBoundary, ExactlyTwoCreditsAreADoubleCredit) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.credit("O-1", "alice", 100);
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"double_credit"}) << "the balance matches the ledger: nothing else is wrong";
  EXPECT_EQ(v.violations[0].subject, "O-1");
  EXPECT_NE(v.violations[0].detail.find("credited 2 times"), std::string::npos) << v.violations[0].detail;
}

// credits_sql gives an order a row per table (ledger, rebates): the checker
// counts the larger, whichever of the two rows comes last.
TEST(InvariantBoundary, TwoRebatesOrTwoCreditsForOneOrderAreADoubleCredit) {
  for (const auto& [credits, rebates] : std::vector<std::pair<int, int>>{{1, 1}, {1, 2}, {2, 1}}) {
    PreparedDatabase db({order()});
    for (int i = 0; i < credits; ++i) db.credit("O-1", "alice", 100);
    for (int i = 0; i < rebates; ++i) db.sql("INSERT INTO rebates(order_no, referrer, amount) VALUES ('O-1', 'bob', 5);");
    const auto v = db.check();
    const int most = std::max(credits, rebates);
    EXPECT_EQ(names_of(v), most > 1 ? Names{"double_credit"} : Names{}) << credits << " credits, " << rebates << " rebates";
    EXPECT_EQ(v.credits_per_order.at("O-1"), most) << credits << " credits, " << rebates << " rebates";
  }
}

// A rebate paid twice beside one ledger credit: the sentence says where
// "2 times" was counted, so that it does not read as the ledger's (whose
// balance is right); counts that agree need no such note.
TEST(InvariantBoundary, ADoubleCreditSaysWhichTableCountedItWhenTheTablesDisagree) {
  for (const auto& [credits, rebates] : std::vector<std::pair<int, int>>{{1, 2}, {2, 2}, {2, 0}}) {
    PreparedDatabase db({order()});
    for (int i = 0; i < credits; ++i) db.credit("O-1", "alice", 100);
    for (int i = 0; i < rebates; ++i) db.sql("INSERT INTO rebates(order_no, referrer, amount) VALUES ('O-1', 'bob', 5);");
    const auto v = db.check();
    ASSERT_EQ(names_of(v), Names{"double_credit"}) << credits << " credits, " << rebates << " rebates";
    const std::string& detail = v.violations[0].detail;
    if (credits == 1)
      EXPECT_EQ(detail, "order O-1 was credited 2 times for one payment of 100 (rebates: 2, ledger: 1)");
    else
      EXPECT_EQ(detail, "order O-1 was credited 2 times for one payment of 100") << credits << " credits, " << rebates;
  }
}

// --- lost_update: a balance that differs from its ledger, either way.

TEST(InvariantBoundary, ABalanceEqualToItsLedgerIsNoLostUpdate) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  const auto v = db.check();
  EXPECT_EQ(names_of(v), Names{});
  ASSERT_EQ(v.accounts.size(), 1u);
  EXPECT_EQ(v.accounts[0].balance, 100);
  EXPECT_EQ(v.accounts[0].ledger_sum, 100);
  EXPECT_EQ(v.accounts[0].should_be, 100);
}

TEST(InvariantBoundary, ABalanceOneBelowItsLedgerIsALostUpdate) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.sql("UPDATE accounts SET balance = 99 WHERE user_id = 'alice';");
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"lost_update"});
  EXPECT_EQ(v.violations[0].subject, "alice");
  EXPECT_NE(v.violations[0].detail.find("holds 99 but its ledger credits sum to 100"), std::string::npos)
      << v.violations[0].detail;
}

TEST(InvariantBoundary, ABalanceOneAboveItsLedgerIsALostUpdate) {
  // A read-modify-write that reads a stale, higher value writes money nobody paid.
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.sql("UPDATE accounts SET balance = 101 WHERE user_id = 'alice';");
  EXPECT_EQ(names_of(db.check()), Names{"lost_update"});
}

TEST(InvariantBoundary, EachAccountIsJudgedOnItsOwnLedger) {
  PreparedDatabase db({order("O-1", "alice"), order("O-2", "bob")});
  db.credit("O-1", "alice", 100);
  db.credit("O-2", "bob", 100);
  // bob's row moved to alice: the totals agree, each account does not.
  db.sql("UPDATE accounts SET balance = 200 WHERE user_id = 'alice'; UPDATE accounts SET balance = 0 WHERE user_id = 'bob';");
  const auto v = db.check();
  EXPECT_EQ(names_of(v), (Names{"lost_update", "lost_update"}));
}

// --- wrong_amount: every payment credited once, the ledger's sum not what was paid.

TEST(InvariantBoundary, ACreditOneBelowOrAboveThePaymentIsAWrongAmount) {
  for (const std::int64_t credited : {99, 101, 1}) {
    PreparedDatabase db({order("O-1", "alice", 100), order("O-2", "alice", 50)});
    db.credit("O-1", "alice", credited);
    db.credit("O-2", "alice", 50);
    const auto v = db.check();
    ASSERT_EQ(names_of(v), Names{"wrong_amount"}) << credited;
    EXPECT_EQ(v.violations[0].subject, "alice");
    EXPECT_NE(v.violations[0].detail.find(fmt::format("was credited {} for its payments, once each, but the gateway "
                                                      "settled 150 (O-1 100, O-2 50)",
                                                      credited + 50)),
              std::string::npos)
        << v.violations[0].detail;
  }
  PreparedDatabase exact({order("O-1", "alice", 100)});
  exact.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(exact.check()), Names{});
}

TEST(InvariantBoundary, AWrongSumThatACountExplainsIsNotAlsoAWrongAmount) {
  // Credited twice: double_credit says it; the sum is off because of the count.
  PreparedDatabase twice({order()});
  twice.credit("O-1", "alice", 100);
  twice.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(twice.check()), Names{"double_credit"});
  // Not credited: lost_payment says it.
  PreparedDatabase none({order()});
  EXPECT_EQ(names_of(none.check()), Names{"lost_payment"});
  // The balance off its ledger: lost_update, whatever the ledger holds.
  PreparedDatabase moved({order()});
  moved.credit("O-1", "alice", 90);
  moved.sql("UPDATE accounts SET balance = 100 WHERE user_id = 'alice';");
  EXPECT_EQ(names_of(moved.check()), Names{"lost_update"});
}

// --- lost_payment: a payment kept by the gateway, neither credited nor flagged.

TEST(InvariantBoundary, ASettledPaymentWithNoCreditIsLost) {
  PreparedDatabase db({order()});
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"lost_payment"});
  EXPECT_NE(v.violations[0].detail.find("and got an ack"), std::string::npos) << v.violations[0].detail;
  db.payments()[0].acked = false;
  EXPECT_NE(db.check().violations[0].detail.find("never acked"), std::string::npos);
}

TEST(InvariantBoundary, ASettledPaymentCreditedOnceOrFlaggedForRefundIsNotLost) {
  PreparedDatabase credited({order()});
  credited.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(credited.check()), Names{});
  PreparedDatabase flagged({order()});
  flagged.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-1', 100);");
  EXPECT_EQ(names_of(flagged.check()), Names{});
}

TEST(InvariantBoundary, APaymentNeverSettledNeedsNoCredit) {
  PreparedDatabase db({unpaid()});
  EXPECT_EQ(names_of(db.check()), Names{});
}

TEST(InvariantBoundary, APaymentTheGatewayGaveBackNeedsNoCredit) {
  PreparedDatabase db({order()});
  db.payments()[0].refunded = true;
  EXPECT_EQ(names_of(db.check()), Names{});
}

TEST(InvariantBoundary, AnOrderPaidTwiceNeedsOneCreditAndOneRefundFlag) {
  PreparedDatabase db({order()});
  db.payments().push_back(db.payments()[0]);  // the second payment, over another channel
  db.credit("O-1", "alice", 100);
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"lost_payment"});
  EXPECT_NE(v.violations[0].detail.find("paid 2 times; 1 credited and 0 flagged"), std::string::npos)
      << v.violations[0].detail;
  db.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-1', 100);");
  EXPECT_EQ(names_of(db.check()), Names{});
}

// Two payments and two credits: one credit keeps one payment, the other is a
// double credit; the second payment is still neither kept nor flagged. The
// sentence counts the credits the story shows, not "1 credited".
TEST(InvariantBoundary, AnOrderPaidTwiceAndCreditedTwiceSaysSoInItsLostPayment) {
  PreparedDatabase db({order()});
  db.payments().push_back(db.payments()[0]);
  db.credit("O-1", "alice", 100);
  db.credit("O-1", "alice", 100);
  const auto v = db.check();
  ASSERT_EQ(names_of(v), (Names{"double_credit", "lost_payment"}));
  EXPECT_EQ(v.violations[1].detail,
            "order O-1 was paid 2 times; 2 credits, of which only one keeps a payment (the other is a double "
            "credit), and 0 flagged for refund");
}

TEST(InvariantBoundary, ACreditTakenBackWithNoRefundNoLongerKeepsThePayment) {
  // One credit, one reversal and no refund at the gateway: net nothing held.
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.reverse("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check()), (Names{"double_refund", "lost_payment"}));
}

// --- ack_before_commit and accepted_invalid are observed during the run and
// handed in; the checker reports them as given, once each.

TEST(InvariantBoundary, ViolationsObservedDuringTheRunAreReportedAsGiven) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check({})), Names{});
  const auto v = db.check({{check::Invariant::kAckBeforeCommit, "O-1", "early"}, {check::Invariant::kAcceptedInvalid, "O-9", "forged"}});
  EXPECT_EQ(names_of(v), (Names{"accepted_invalid", "ack_before_commit"}));
}

// --- unpaid_credit: a credit for an order the gateway never settled.

TEST(InvariantBoundary, ACreditForAnOrderNeverPaidIsAnUnpaidCredit) {
  PreparedDatabase db({unpaid()});
  db.payments()[0].closed = true;
  db.credit("O-1", "alice", 100);
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"unpaid_credit"});
  EXPECT_NE(v.violations[0].detail.find("(it closed the trade)"), std::string::npos) << v.violations[0].detail;
}

TEST(InvariantBoundary, ACreditForAnOrderPaidOnceIsNoUnpaidCredit) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check()), Names{});
}

TEST(InvariantBoundary, ACreditMadeByAnInvalidNotifyIsAcceptedInvalidNotAlsoUnpaid) {
  PreparedDatabase db({unpaid()});
  db.credit("O-1", "alice", 100);
  const auto v = db.check({{check::Invariant::kAcceptedInvalid, "O-1", "a forged notify committed changes"}});
  EXPECT_EQ(names_of(v), Names{"accepted_invalid"});
  // Another order's invalid notify excuses nothing here.
  EXPECT_EQ(names_of(db.check({{check::Invariant::kAcceptedInvalid, "O-2", "forged"}})), (Names{"accepted_invalid", "unpaid_credit"}));
}

// --- illegal_transition: a status change outside the state machine, or a
// credit on a CLOSED order.

TEST(InvariantBoundary, TheStateMachinesOwnMovesAreLegal) {
  PreparedDatabase paid({order("O-1"), unpaid("O-2"), order("O-3")});
  paid.credit("O-1", "alice", 100);
  paid.set_status("O-1", "PAID");
  paid.set_status("O-1", "REFUNDED");
  paid.set_status("O-2", "CLOSED");
  // A payment after the close: flagged for refund, so CLOSED -> PAID is allowed.
  paid.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-3', 100);");
  paid.set_status("O-3", "CLOSED");
  paid.set_status("O-3", "PAID");
  EXPECT_EQ(names_of(paid.check()), Names{});
}

TEST(InvariantBoundary, ClosedToPaidWithoutARefundFlagIsIllegal) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.set_status("O-1", "CLOSED");
  db.set_status("O-1", "PAID");
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"illegal_transition"});
  EXPECT_NE(v.violations[0].detail.find("moved CLOSED -> PAID with no refund flagged"), std::string::npos)
      << v.violations[0].detail;
}

TEST(InvariantBoundary, EveryMoveOutsideTheStateMachineIsIllegal) {
  const std::vector<std::pair<std::string, std::string>> illegal = {
      {"PAID", "WAIT_PAY"}, {"PAID", "CLOSED"}, {"REFUNDED", "PAID"}, {"CLOSED", "WAIT_PAY"}, {"REFUNDED", "WAIT_PAY"}};
  for (const auto& [from, to] : illegal) {
    PreparedDatabase db({unpaid()});
    if (from != "WAIT_PAY") db.set_status("O-1", from == "REFUNDED" ? "PAID" : from);
    if (from == "REFUNDED") db.set_status("O-1", "REFUNDED");
    EXPECT_EQ(names_of(db.check()), Names{}) << "reaching " << from;
    db.set_status("O-1", to);
    EXPECT_EQ(names_of(db.check()), Names{"illegal_transition"}) << from << " -> " << to;
  }
}

TEST(InvariantBoundary, AnOrderMovedIllegallyTwiceIsReportedOnce) {
  PreparedDatabase db({unpaid()});
  db.set_status("O-1", "CLOSED");
  db.set_status("O-1", "WAIT_PAY");
  db.set_status("O-1", "CLOSED");
  db.set_status("O-1", "WAIT_PAY");
  EXPECT_EQ(names_of(db.check()), Names{"illegal_transition"});
}

TEST(InvariantBoundary, ACreditOnAClosedOrderIsIllegalAndNoCreditIsNot) {
  // The close job's UPDATE wins; the order never moved out of the machine,
  // but a credit on it is money for a trade the merchant closed.
  PreparedDatabase closed({order()});
  closed.set_status("O-1", "CLOSED");
  closed.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-1', 100);");
  EXPECT_EQ(names_of(closed.check()), Names{});
  closed.credit("O-1", "alice", 100);
  const auto v = closed.check();
  ASSERT_EQ(names_of(v), Names{"illegal_transition"});
  EXPECT_NE(v.violations[0].detail.find("is CLOSED but was credited"), std::string::npos) << v.violations[0].detail;
}

// --- payload_missing: a credit whose raw payload was not stored, where the
// scenario requires it.

TEST(InvariantBoundary, ACreditWithoutItsStoredPayloadIsMissingOnlyWhereRequired) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  check::CheckOptions required;
  required.payload_required = true;
  EXPECT_EQ(names_of(db.check({}, {})), Names{}) << "not required: nothing to report";
  const auto v = db.check({}, required);
  ASSERT_EQ(names_of(v), Names{"payload_missing"});
  EXPECT_EQ(v.violations[0].subject, "O-1");
}

TEST(InvariantBoundary, AnEmptyPayloadIsMissingAndAStoredOneIsNot) {
  check::CheckOptions required;
  required.payload_required = true;
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.sql("INSERT INTO callback_log(out_trade_no, payload) VALUES ('O-1', '');");
  EXPECT_EQ(names_of(db.check({}, required)), Names{"payload_missing"});
  db.sql("UPDATE callback_log SET payload = '{\"out_trade_no\":\"O-1\"}' WHERE out_trade_no = 'O-1';");
  EXPECT_EQ(names_of(db.check({}, required)), Names{});
}

TEST(InvariantBoundary, NoCreditNeedsNoPayload) {
  check::CheckOptions required;
  required.payload_required = true;
  PreparedDatabase db({order()});
  db.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-1', 100);");
  EXPECT_EQ(names_of(db.check({}, required)), Names{});
}

// --- lost_refund and double_refund: credits taken back, against the
// gateway's refunds.

gateway::OrderSpec refunded_order() {
  auto o = order();
  o.refund_after = kMinute;
  return o;
}

TEST(InvariantBoundary, ARefundTakenBackOnceIsNeitherLostNorDouble) {
  PreparedDatabase db({refunded_order()});
  db.payments()[0].refunded = true;
  db.credit("O-1", "alice", 100);
  db.reverse("O-1", "alice", 100);
  const auto v = db.check();
  EXPECT_EQ(names_of(v), Names{});
  EXPECT_EQ(v.accounts[0].balance, 0);
  EXPECT_EQ(v.accounts[0].should_be, 0);
}

TEST(InvariantBoundary, ARefundNotTakenBackIsLostAndOnlyWhenTheOrderWasCredited) {
  PreparedDatabase credited({refunded_order()});
  credited.payments()[0].refunded = true;
  credited.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(credited.check()), Names{"lost_refund"});
  PreparedDatabase never_credited({refunded_order()});
  never_credited.payments()[0].refunded = true;
  EXPECT_EQ(names_of(never_credited.check()), Names{});
}

TEST(InvariantBoundary, ARefundTakenBackTwiceIsADoubleRefund) {
  PreparedDatabase db({refunded_order()});
  db.payments()[0].refunded = true;
  db.credit("O-1", "alice", 100);
  db.credit("O-1", "alice", 100);  // credited twice too: two reversals do not exceed two credits
  db.reverse("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check()), Names{"double_credit"});
  db.reverse("O-1", "alice", 100);
  const auto v = db.check();
  ASSERT_EQ(names_of(v), (Names{"double_credit", "double_refund"}));
  EXPECT_NE(v.violations[1].detail.find("taken back 2 times for one refund"), std::string::npos)
      << v.violations[1].detail;
}

TEST(InvariantBoundary, MoreReversalsThanCreditsIsADoubleRefund) {
  PreparedDatabase db({refunded_order()});
  db.payments()[0].refunded = true;
  db.reverse("O-1", "alice", 100);  // taken back, never given
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"double_refund"});
  EXPECT_NE(v.violations[0].detail.find("taken back 1 time but given 0"), std::string::npos) << v.violations[0].detail;
}

TEST(InvariantBoundary, AReversalWithNoRefundAtTheGatewayIsADoubleRefund) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.credit("O-1", "alice", 100);
  db.reverse("O-1", "alice", 100);  // undoes the double credit's extra, but nothing was refunded
  const auto v = db.check();
  ASSERT_EQ(names_of(v), (Names{"double_credit", "double_refund"}));
  EXPECT_NE(v.violations[1].detail.find("yet the gateway refunded nothing"), std::string::npos)
      << v.violations[1].detail;
}

// --- settled_in_database(): what ack_before_commit asks at each ack.

TEST(InvariantBoundary, AnOrderIsSettledOnceCreditedOrFlaggedAndNotWithAZeroCount) {
  PreparedDatabase db({order("O-1"), order("O-2"), order("O-3")});
  // A handler's own schema may list every order with its count, zero included.
  Schema schema = reference_schema();
  schema.credits_sql =
      "SELECT o.order_no, (SELECT COUNT(*) FROM ledger l WHERE l.order_no = o.order_no AND l.amount > 0) FROM orders o";
  db.credit("O-1", "alice", 100);
  db.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-2', 100);");
  env::SqliteConnection raw(db.connection());
  EXPECT_TRUE(check::settled_in_database(raw, schema, "O-1"));
  EXPECT_TRUE(check::settled_in_database(raw, schema, "O-2"));
  EXPECT_FALSE(check::settled_in_database(raw, schema, "O-3")) << "a count of 0 is not a credit";
}

// --- stuck: a task killed for its step budget. oracle_error: an oracle query
// that fails (the run could not be judged; not the handler's bug).

TEST(InvariantBoundary, AStuckTaskIsReportedWithWhy) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check({}, {}, {})), Names{});
  const auto v = db.check({}, {}, {"T1 made 2000 scheduling points"});
  ASSERT_EQ(names_of(v), Names{"stuck"});
  EXPECT_EQ(v.violations[0].detail, "T1 made 2000 scheduling points");
}

TEST(InvariantBoundary, AnOracleQueryThatFailsIsReportedNotTakenAsNothing) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.sql("DROP TABLE accounts;");
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"oracle_error"});
  EXPECT_NE(v.violations[0].detail.find("could not read balances"), std::string::npos) << v.violations[0].detail;
}

// A credits query that fails reads as no credits: judged on that, a handler
// that credited the order would show lost_payment. Only the oracle_error is said.
TEST(InvariantBoundary, AFailedCreditsQueryIsNotTakenForALostPayment) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.sql("DROP TABLE ledger;");  // the credits query reads it, and so does the balances query
  const auto v = db.check();
  ASSERT_EQ(names_of(v), (Names{"oracle_error", "oracle_error", "oracle_error"}));
  EXPECT_NE(v.violations[0].detail.find("could not read credits"), std::string::npos) << v.violations[0].detail;
}

TEST(InvariantBoundary, EveryOracleQueryThatFailsIsNamedAndOneThatWorksIsNot) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check()), Names{}) << "the reference schema's queries all work";
  db.sql("DROP TABLE twice_status_history;");
  const auto v = db.check();
  ASSERT_EQ(names_of(v), Names{"oracle_error"}) << "a failed transitions query was once taken as no transitions";
  EXPECT_NE(v.violations[0].detail.find("transitions (Schema::transitions_sql)"), std::string::npos)
      << v.violations[0].detail;
}


// --- the effect invariants, over what the external services applied.

std::vector<services::AppliedEffect> shipped(std::initializer_list<std::pair<const char*, Micros>> orders) {
  std::vector<services::AppliedEffect> out;
  for (const auto& [order_no, at] : orders) out.push_back({at, 1, "warehouse", "ship", order_no, ""});
  return out;
}

check::CheckOptions effects(const std::vector<services::AppliedEffect>& applied, Names required = {"ship"}) {
  check::CheckOptions o;
  o.required_effects = std::move(required);
  o.effects = &applied;
  return o;
}

TEST(InvariantBoundary, OneShipmentIsNotADuplicateTwoAre) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  const auto once = shipped({{"O-1", 10}});
  EXPECT_EQ(names_of(db.check({}, effects(once))), Names{});
  const auto twice = shipped({{"O-1", 10}, {"O-1", 20}});
  const auto v = db.check({}, effects(twice));
  ASSERT_EQ(names_of(v), Names{"duplicate_effect"});
  EXPECT_NE(v.violations[0].detail.find("'ship' 2 times"), std::string::npos) << v.violations[0].detail;
  const auto two_orders = shipped({{"O-1", 10}, {"O-2", 20}});
  EXPECT_EQ(names_of(db.check({}, effects(two_orders, {}))), Names{"effect_without_payment"})
      << "O-2 is not an order the gateway knows; one shipment each is no duplicate";
}

TEST(InvariantBoundary, APaidCreditedOrderWithoutItsRequiredEffectIsLost) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  const std::vector<services::AppliedEffect> none;
  EXPECT_EQ(names_of(db.check({}, effects(none))), Names{"lost_effect"});
  EXPECT_EQ(names_of(db.check({}, effects(none, {}))), Names{}) << "a scenario that requires no effect";
  const auto one = shipped({{"O-1", 10}});
  EXPECT_EQ(names_of(db.check({}, effects(one, {"ship", "mail"}))), Names{"lost_effect"}) << "mail is required too";
  db.payments()[0].refunded = true;
  db.reverse("O-1", "alice", 100);
  EXPECT_EQ(names_of(db.check({}, effects(none))), Names{}) << "a refunded order owes no shipment";
}

TEST(InvariantBoundary, ALostPaymentIsNotAlsoALostEffect) {
  PreparedDatabase db({order()});
  const std::vector<services::AppliedEffect> none;
  EXPECT_EQ(names_of(db.check({}, effects(none))), Names{"lost_payment"});
}

TEST(InvariantBoundary, AnEffectIsWithoutPaymentWhenNeverSettledRolledBackOrRefundedFirst) {
  {
    PreparedDatabase db({unpaid()});
    const auto s = shipped({{"O-1", 10}});
    EXPECT_EQ(names_of(db.check({}, effects(s, {}))), Names{"effect_without_payment"});
  }
  {
    PreparedDatabase db({order()});  // settled, never credited: the transaction rolled back
    const auto s = shipped({{"O-1", 10}});
    EXPECT_EQ(names_of(db.check({}, effects(s, {}))), (Names{"effect_without_payment", "lost_payment"}));
  }
  {
    PreparedDatabase db({order()});
    db.credit("O-1", "alice", 100);
    db.reverse("O-1", "alice", 100);
    db.payments()[0].refunded = true;
    db.payments()[0].refund_acked_at = 50;
    const auto before = shipped({{"O-1", 50}});
    EXPECT_EQ(names_of(db.check({}, effects(before, {}))), Names{}) << "shipped, then refunded: a return, not a bug";
    const auto after = shipped({{"O-1", 51}});
    const auto v = db.check({}, effects(after, {}));
    ASSERT_EQ(names_of(v), Names{"effect_without_payment"});
    EXPECT_NE(v.violations[0].detail.find("acknowledged its refund"), std::string::npos) << v.violations[0].detail;
  }
}

// Shipped on a forged or underpaid notify before the real payment settled: the
// later payment does not make that shipment paid for (a probe's handler shipped
// 27 s before the user paid, and the run passed).
TEST(InvariantBoundary, AnEffectBeforeThePaymentSettledIsWithoutPayment) {
  PreparedDatabase db({order()});
  db.credit("O-1", "alice", 100);
  db.payments()[0].settled_at = 30;
  const auto at_settle = shipped({{"O-1", 30}});
  EXPECT_EQ(names_of(db.check({}, effects(at_settle, {}))), Names{}) << "not before: the same instant";
  const auto before = shipped({{"O-1", 29}});
  const auto v = db.check({}, effects(before, {}));
  ASSERT_EQ(names_of(v), Names{"effect_without_payment"});
  EXPECT_NE(v.violations[0].detail.find("settled its payment only at"), std::string::npos) << v.violations[0].detail;
}

// Paid after the order was closed: the merchant flags the payment for refund
// and keeps nothing, so shipping it is shipping unpaid goods. A second payment
// flagged for refund leaves the first one kept: shipping that order is right.
TEST(InvariantBoundary, AnEffectForAnOrderWhoseOnlyPaymentIsFlaggedForRefundIsWithoutPayment) {
  {
    PreparedDatabase db({order()});
    db.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-1', 100);");
    const auto s = shipped({{"O-1", 10}});
    const auto v = db.check({}, effects(s, {}));
    ASSERT_EQ(names_of(v), Names{"effect_without_payment"});
    EXPECT_NE(v.violations[0].detail.find("only payment is flagged for refund"), std::string::npos)
        << v.violations[0].detail;
  }
  {
    PreparedDatabase db({order()});
    db.payments().push_back(db.payments()[0]);  // the second payment, over another channel
    db.credit("O-1", "alice", 100);
    db.sql("INSERT INTO refunds(order_no, amount) VALUES ('O-1', 100);");
    const auto s = shipped({{"O-1", 10}});
    EXPECT_EQ(names_of(db.check({}, effects(s, {}))), Names{}) << "the first payment is kept";
  }
}

}  // namespace
}  // namespace twice
