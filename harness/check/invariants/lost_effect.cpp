// lost_effect: an order the merchant kept the money for (settled at the
// gateway, credited, neither refunded by the gateway nor flagged for refund)
// never caused an effect its scenario requires: paid and never shipped. A
// payment lost altogether is lost_payment's finding; one root cause, one name.
#include <fmt/format.h>

#include "check/invariants/effects.h"
#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_lost_effect(const Facts& facts, Findings& out) {
  if (facts.options.required_effects.empty()) return;
  const std::vector<EffectsOfOrder> applied = effects_by_order(facts);
  for (const auto& o : facts.orders) {
    if (kept_payments(o) <= 0 || o.credits == 0) continue;
    for (const auto& effect : facts.options.required_effects) {
      bool found = false;
      for (const auto& g : applied) found = found || (g.order_no == o.order_no && g.effect == effect);
      if (!found)
        out.emplace_back(Invariant::kLostEffect, o.order_no,
                         fmt::format("order {} was paid and credited, yet no service ever applied '{}' for it",
                                     o.order_no, effect));
    }
  }
}

}  // namespace twice::check
