// double_refund: a credit taken back more often than the gateway refunded it,
// or more often than it was given.
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_double_refund(const Facts& facts, Findings& out) {
  for (const auto& o : facts.orders) {
    const int allowed = o.gateway_refunded ? 1 : 0;
    if (o.reversals <= allowed && o.reversals <= o.credits) continue;
    out.emplace_back(
        Invariant::kDoubleRefund, o.order_no,
        o.reversals > o.credits
            ? fmt::format("order {}: its credit was taken back {} time{} but given {}", o.order_no, o.reversals,
                          o.reversals == 1 ? "" : "s", o.credits)
        : !o.gateway_refunded
            ? fmt::format("order {}: its credit was taken back, yet the gateway refunded nothing", o.order_no)
            : fmt::format("order {}: its credit was taken back {} times for one refund", o.order_no, o.reversals));
  }
}

}  // namespace twice::check
