// lost_refund: the gateway gave a payment back, and the order still holds
// its credit (judged only where the Schema says how reversals are kept).
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_lost_refund(const Facts& facts, Findings& out) {
  if (facts.schema->reversals_sql.empty()) return;
  for (const auto& o : facts.orders)
    if (o.gateway_refunded && o.credits > 0 && o.reversals == 0)
      out.emplace_back(Invariant::kLostRefund, o.order_no,
                       fmt::format("the gateway refunded {} of order {} to {}, yet the order still holds its credit",
                                   o.first->order.amount, o.order_no, o.first->order.user));
}

}  // namespace twice::check
