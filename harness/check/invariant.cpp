#include "check/invariant.h"

#include <algorithm>

namespace twice::check {

const std::vector<InvariantInfo>& invariants() {
  static const std::vector<InvariantInfo> kInvariants = {
      {Invariant::kDoubleCredit, "double_credit", Phase::kAtQuiescence,
       "an order has more than one credit in the ledger"},
      {Invariant::kLostUpdate, "lost_update", Phase::kAtQuiescence,
       "a balance differs from the sum of the credits the ledger holds for it"},
      {Invariant::kWrongAmount, "wrong_amount", Phase::kAtQuiescence,
       "each of an account's payments was credited once, yet its ledger does not sum to what the gateway settled "
       "(a credit of the wrong amount)"},
      {Invariant::kLostPayment, "lost_payment", Phase::kAtQuiescence,
       "the gateway settled a payment, yet at quiescence it is neither credited nor flagged for refund"},
      {Invariant::kAckBeforeCommit, "ack_before_commit", Phase::kDuringRun,
       "the gateway got an ack for a payment before its credit was committed (early, or committed later)"},
      {Invariant::kAcceptedInvalid, "accepted_invalid", Phase::kDuringRun,
       "a forged, tampered, unknown-order, wrong-amount or replayed notify's task committed a change to what the "
       "oracle queries read (credits, status, refund flag, payload, balances) that the gateway's ledger did not "
       "justify, or that it made without asking the gateway (query_payment)"},
      {Invariant::kIllegalTransition, "illegal_transition", Phase::kAtQuiescence,
       "an order moved outside its state machine (CLOSED to PAID without a refund, a closed order credited)"},
      {Invariant::kLostRefund, "lost_refund", Phase::kAtQuiescence,
       "the gateway refunded a payment, yet at quiescence the order still holds its credit"},
      {Invariant::kDoubleRefund, "double_refund", Phase::kAtQuiescence,
       "an order's credit was taken back more often than the gateway refunded it"},
      {Invariant::kUnpaidCredit, "unpaid_credit", Phase::kAtQuiescence,
       "an order was credited though the gateway never settled a payment for it (a close or refund taken for a "
       "payment)"},
      {Invariant::kPayloadMissing, "payload_missing", Phase::kAtQuiescence,
       "a credited payment's raw callback payload was not stored (scenarios that require it)"},
      {Invariant::kDuplicateEffect, "duplicate_effect", Phase::kAtQuiescence,
       "an external service applied one order's effect more than once (shipped, mailed or decremented twice)"},
      {Invariant::kLostEffect, "lost_effect", Phase::kAtQuiescence,
       "a paid, credited, unrefunded order never caused an effect its scenario requires (never shipped)"},
      {Invariant::kEffectWithoutPayment, "effect_without_payment", Phase::kAtQuiescence,
       "an external service applied an order's effect though its payment was not settled yet or never, is flagged "
       "for refund, was rolled back, or its refund was acknowledged first"},
      {Invariant::kStuck, "stuck", Phase::kDuringRun,
       "a handler never returned within its step budget (a livelock or an endless retry loop)"},
      {Invariant::kOracleError, "oracle_error", Phase::kHarness,
       "an oracle query of the handler's Schema failed, so the run could not be judged (fix the Schema)"},
      {Invariant::kJobFailed, "job_failed", Phase::kHarness,
       "a background job (reconciler, order closer, ...) had a statement of its own refused (a table the handler's "
       "Schema does not have): it did no work, so the scenario could not judge the handler with it"},
  };
  return kInvariants;
}

std::string_view name_of(Invariant invariant) {
  for (const auto& i : invariants())
    if (i.id == invariant) return i.name;
  return "?";
}

std::string invariant_names() {
  std::string names;
  for (const auto& i : invariants()) names += (names.empty() ? "" : ", ") + std::string(i.name);
  return names;
}

bool is_invariant(std::string_view name) {
  const auto& all = invariants();
  return std::any_of(all.begin(), all.end(), [&](const InvariantInfo& i) { return i.name == name; });
}

}  // namespace twice::check
