// duplicate_effect: a service applied one order's effect more than once: the
// goods shipped twice, two confirmation mails, stock decremented twice for one
// order. Judged from the services' own record (each applied copy counts,
// whatever the caller saw), never from what the handler believes it did.
// Also the effect helpers the three effect invariants share.
#include <map>

#include <fmt/format.h>

#include "check/invariants/effects.h"
#include "check/invariants/quiescent.h"
#include "sim/trace.h"

namespace twice::check {

std::vector<EffectsOfOrder> effects_by_order(const Facts& facts) {
  std::vector<EffectsOfOrder> out;
  if (!facts.options.effects) return out;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const auto& e : *facts.options.effects) {
    auto [it, added] = index.emplace(std::make_pair(e.order_no, e.effect), out.size());
    if (added) out.push_back(EffectsOfOrder{e.order_no, e.effect, e.service, {}});
    out[it->second].applied.push_back(&e);
  }
  return out;
}

const OrderFacts* order_facts(const Facts& facts, const std::string& order_no) {
  for (const auto& o : facts.orders)
    if (o.order_no == order_no) return &o;
  return nullptr;
}

int kept_payments(const OrderFacts& o) {
  return o.settled - (o.gateway_refunded ? 1 : 0) - (o.refund_flagged ? 1 : 0);
}

void judge_duplicate_effect(const Facts& facts, Findings& out) {
  for (const auto& g : effects_by_order(facts)) {
    if (g.applied.size() < 2) continue;
    std::string when;
    for (const auto* e : g.applied)
      when += fmt::format("{}{} at {}{}", when.empty() ? "" : ", ", sim::task_label(e->task), format_time(e->at),
                          e->key.empty() ? "" : fmt::format(" (key {})", e->key));
    out.emplace_back(Invariant::kDuplicateEffect, g.order_no,
                     fmt::format("order {}: {} applied '{}' {} times: {}", g.order_no, g.service, g.effect,
                                 g.applied.size(), when));
  }
}

}  // namespace twice::check
