// lost_payment: every payment the gateway settled and kept must be credited
// once or flagged for refund. A payment the gateway gave back need not be
// kept: credited and taken back, or never credited at all.
#include <algorithm>

#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

namespace {

// How the order's credits stand against its payments: one credit keeps one
// payment; a payment beyond it must be flagged for refund, and a second
// credit for it is a double credit (double_credit's), not a kept payment.
std::string credited(const OrderFacts& o) {
  if (o.credits <= 1) return fmt::format("{} credited", o.credits);
  return fmt::format("{} credits, of which only one keeps a payment (the other{} double credit{}),", o.credits,
                     o.credits == 2 ? " is a" : "s are", o.credits == 2 ? "" : "s");
}

}  // namespace

void judge_lost_payment(const Facts& facts, Findings& out) {
  for (const auto& o : facts.orders) {
    const int kept = o.settled - (o.gateway_refunded ? 1 : 0);
    const int net = o.credits - o.reversals;
    const int flagged = o.refund_flagged ? 1 : 0;
    if (kept <= 0 || std::min(std::max(net, 0), 1) + flagged >= kept) continue;
    out.emplace_back(
        Invariant::kLostPayment, o.order_no,
        o.settled > 1
            ? fmt::format("order {} was paid {} times; {} and {} flagged for refund{}", o.order_no, o.settled,
                          credited(o), flagged,
                          facts.schema && facts.schema->refunds_sql.empty()
                              ? " (the schema has no refunds_sql: it cannot flag a payment to return)"
                              : "")
            : fmt::format("order {}: the gateway settled {} ({}), but it was neither credited nor flagged for refund",
                          o.order_no, o.first->order.amount, o.acked ? "and got an ack" : "never acked"));
  }
}

}  // namespace twice::check
