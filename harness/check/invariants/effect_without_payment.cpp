// effect_without_payment: a service applied an order's effect though the
// merchant had no payment to show for it: the gateway never settled one (an
// unpaid or unknown order, a forged notify), not yet (applied before the
// payment settled: a forged or underpaid notify acted on), the merchant keeps
// none (its only payment is flagged for refund: paid after the order closed),
// the payment's transaction rolled back (settled, yet neither credited nor
// flagged at quiescence), or the merchant had acknowledged the order's refund
// before the effect was applied.
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
    } else if (o->first->settled_at >= 0 && first.at < o->first->settled_at) {
      // A forged or underpaid notify that reached a service before the real
      // payment: the later payment does not make that shipment paid for.
      why = fmt::format("the gateway settled its payment only at {}", format_time(o->first->settled_at));
    } else if (o->refund_flagged && o->settled <= 1) {
      // Its one payment came after the order was closed (or was otherwise
      // refused) and the merchant flagged it for refund: nothing is kept.
      why = "the merchant keeps no payment for it (its only payment is flagged for refund)";
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
