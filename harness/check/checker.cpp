#include "check/checker.h"

#include <algorithm>

#include "check/invariants/quiescent.h"

namespace twice::check {

namespace {

// The invariants judged at quiescence, in the order they run.
constexpr void (*kQuiescent[])(const Facts&, Findings&) = {
    judge_double_credit, judge_lost_refund,        judge_double_refund,   judge_unpaid_credit,
    judge_lost_payment,  judge_illegal_transition, judge_payload_missing, judge_lost_update,
    judge_wrong_amount,
    judge_duplicate_effect, judge_lost_effect, judge_effect_without_payment,
};

}  // namespace

Verdict judge(env::RawConnection& db, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
              const std::vector<std::string>& stuck, const std::vector<Violation>& observed,
              const CheckOptions& options) {
  std::set<std::string> accepted_invalid;
  for (const auto& o : observed)
    if (o.is(Invariant::kAcceptedInvalid)) accepted_invalid.insert(o.subject);
  Facts facts = read_facts(db, schema, payments, accepted_invalid, options);

  Verdict v;
  v.violations = std::move(facts.oracle_errors);
  // A failed oracle query reads as no rows: judged on such facts, a correct
  // handler would show lost payments it did not lose. The oracle_error says
  // what to fix; the invariants wait for facts that can be read.
  if (v.violations.empty())
    for (auto judge : kQuiescent) judge(facts, v.violations);
  v.violations.insert(v.violations.end(), observed.begin(), observed.end());
  for (const auto& why : stuck) v.violations.emplace_back(Invariant::kStuck, "", why);
  // One line per invariant and subject, in a stable order.
  std::stable_sort(v.violations.begin(), v.violations.end(),
                   [](const Violation& a, const Violation& b) { return a.invariant < b.invariant; });
  v.accounts = std::move(facts.accounts);
  v.credits_per_order = std::move(facts.credits_per_order);
  v.refunded = std::move(facts.refunded);
  return v;
}

}  // namespace twice::check
