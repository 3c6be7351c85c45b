// What the external services applied, grouped per (order, effect) in the
// order first applied: the common reading of the three effect invariants.
#pragma once

#include <string>
#include <vector>

#include "check/facts.h"

namespace twice::check {

struct EffectsOfOrder {
  std::string order_no, effect, service;
  std::vector<const services::AppliedEffect*> applied;  // in the order applied
};

std::vector<EffectsOfOrder> effects_by_order(const Facts& facts);
// The order's facts (from the gateway's ledger), or nullptr for an order the gateway never knew.
const OrderFacts* order_facts(const Facts& facts, const std::string& order_no);
// The order's payments the merchant keeps: settled, less the one the gateway
// refunded and the one the merchant flagged to refund.
int kept_payments(const OrderFacts& o);

}  // namespace twice::check
