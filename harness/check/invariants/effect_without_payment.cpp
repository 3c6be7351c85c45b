// effect_without_payment: a service applied an order's effect though the
// merchant had no payment to show for it: the gateway never settled one (an
// unpaid or unknown order, a forged notify), the payment's transaction rolled
// back (settled, yet neither credited nor flagged at quiescence), or the
// merchant had acknowledged the order's refund before the effect was applied.
// All three read from the harness's records: the gateway's ledger, the
// services' record, the database's oracle queries.
#include <fmt/format.h>

#include "check/invariants/effects.h"
#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_effect_without_payment(const Facts& facts, Findings& out) {
  for (const auto& g : effects_by_order(facts)) {
    const services::AppliedEffect& first = *g.applied.front();
    const OrderFacts* o = order_facts(facts, g.order_no);
    std::string why;
    if (!o || o->settled == 0) {
      why = "the gateway never settled a payment for it";
    } else if (o->first->refund_acked_at >= 0 && first.at > o->first->refund_acked_at) {
      why = fmt::format("the merchant had acknowledged its refund at {}", format_time(o->first->refund_acked_at));
    } else if (o->credits == 0 && !o->refund_flagged && !o->gateway_refunded) {
      why = "its payment is not credited at quiescence (the transaction rolled back)";
    } else {
      continue;
    }
    out.emplace_back(Invariant::kEffectWithoutPayment, g.order_no,
                     fmt::format("{} applied '{}' for order {} at {}, yet {}", g.service, g.effect, g.order_no,
                                 format_time(first.at), why));
  }
}

}  // namespace twice::check
