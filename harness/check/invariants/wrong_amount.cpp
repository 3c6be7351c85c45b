// wrong_amount: an account whose every order was credited the right number
// of times, yet whose ledger does not sum to what the gateway settled for
// them: a credit of the wrong amount (a unit bug, fen taken for yuan; an
// amount read from the wrong field). The count-based invariants cannot see
// it, and lost_update compares the balance with the ledger only, so a
// handler that wrote 42 where 4200 was paid, to both, passed every check.
//
// Judged only where nothing else explains the difference: the balance
// equals the ledger (else lost_update), every order of the account holds
// exactly the credits its kept payments call for (else double_credit,
// lost_payment, unpaid_credit), no invalid notify changed it (else
// accepted_invalid), and none was refunded or reversed, since how a
// handler's ledger records a reversal is its own (a negative row, a
// deleted one, or a mark the sum does not see).
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_wrong_amount(const Facts& facts, Findings& out) {
  for (const auto& a : facts.accounts) {
    if (a.balance != a.ledger_sum || a.ledger_sum == a.should_be) continue;
    bool judged = true;
    bool any = false;
    std::string paid;
    for (const auto& o : facts.orders) {
      if (!o.first || o.first->order.user != a.user) continue;
      any = true;
      if (o.reversals > 0 || o.gateway_refunded || o.accepted_invalid) {
        judged = false;
        break;
      }
      const int wanted = o.settled - (o.refund_flagged ? 1 : 0) > 0 ? 1 : 0;
      if (o.credits != wanted) {
        judged = false;
        break;
      }
      if (wanted == 1)
        paid += fmt::format("{}{} {}", paid.empty() ? "" : ", ", o.order_no, o.first->order.amount);
    }
    if (!judged || !any) continue;
    out.emplace_back(Invariant::kWrongAmount, a.user,
                     fmt::format("account {} was credited {} for its payments, once each, but the gateway settled {} "
                                 "({}): a credit of the wrong amount",
                                 a.user, a.ledger_sum, a.should_be, paid.empty() ? "none kept" : paid));
  }
}

}  // namespace twice::check
