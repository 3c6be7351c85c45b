// unpaid_credit: a credit for an order the gateway never settled (a close or
// a refund notify taken for a payment). An invalid notify's credit is
// accepted_invalid's finding instead.
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_unpaid_credit(const Facts& facts, Findings& out) {
  for (const auto& o : facts.orders)
    if (o.settled == 0 && o.credits > 0 && !o.accepted_invalid)
      out.emplace_back(Invariant::kUnpaidCredit, o.order_no,
                       fmt::format("order {} was credited {}, yet the gateway settled no payment for it{}", o.order_no,
                                   o.first->order.amount, o.gateway_closed ? " (it closed the trade)" : ""));
}

}  // namespace twice::check
