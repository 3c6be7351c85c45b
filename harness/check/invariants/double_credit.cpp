// double_credit: an order credited more than once for one payment.
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_double_credit(const Facts& facts, Findings& out) {
  for (const auto& o : facts.orders)
    if (o.credits > 1)
      out.emplace_back(Invariant::kDoubleCredit, o.order_no,
                       fmt::format("order {} was credited {} times for one payment of {}", o.order_no, o.credits,
                                   o.first->order.amount));
}

}  // namespace twice::check
