// lost_payment: every payment the gateway settled and kept must be credited
// once or flagged for refund. A payment the gateway gave back need not be
// kept: credited and taken back, or never credited at all.
#include <algorithm>

#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_lost_payment(const Facts& facts, Findings& out) {
  for (const auto& o : facts.orders) {
    const int kept = o.settled - (o.gateway_refunded ? 1 : 0);
    const int net = o.credits - o.reversals;
    const int flagged = o.refund_flagged ? 1 : 0;
    if (kept <= 0 || std::min(std::max(net, 0), 1) + flagged >= kept) continue;
    out.emplace_back(
        Invariant::kLostPayment, o.order_no,
        o.settled > 1
            ? fmt::format("order {} was paid {} times; {} credited and {} flagged for refund{}", o.order_no,
                          o.settled, std::min(o.credits, 1), flagged,
                          facts.schema && facts.schema->refunds_sql.empty()
                              ? " (the schema has no refunds_sql: it cannot flag a payment to return)"
                              : "")
            : fmt::format("order {}: the gateway settled {} ({}), but it was neither credited nor flagged for refund",
                          o.order_no, o.first->order.amount, o.acked ? "and got an ack" : "never acked"));
  }
}

}  // namespace twice::check
