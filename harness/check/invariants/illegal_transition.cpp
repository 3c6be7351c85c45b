// illegal_transition: an order outside the state machine its Schema states
// (Schema::OrderStates): credited while its final status is closed, or a
// status change the machine does not allow (reported once per order).
#include <set>

#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

namespace {

bool allowed(const Schema::OrderStates& s, const std::string& from, const std::string& to, bool refund_flagged) {
  if (from == s.waiting) return to == s.paid || to == s.closed;
  if (from == s.paid) return to == s.refunded;
  if (from == s.closed) return to == s.refunded || (to == s.paid && refund_flagged);
  return false;
}

}  // namespace

void judge_illegal_transition(const Facts& facts, Findings& out) {
  const Schema::OrderStates& states = facts.schema->states;
  for (const auto& o : facts.orders)
    if (o.credits > 0 && o.status == states.closed)
      out.emplace_back(Invariant::kIllegalTransition, o.order_no,
                       fmt::format("order {} is {} but was credited", o.order_no, states.closed));
  std::set<std::string> reported;
  for (const auto& t : facts.transitions) {
    if (allowed(states, t.from, t.to, facts.refunded.count(t.order_no) > 0) || !reported.insert(t.order_no).second)
      continue;
    out.emplace_back(Invariant::kIllegalTransition, t.order_no,
                     fmt::format("order {} moved {} -> {}{}", t.order_no, t.from, t.to,
                                 t.from == states.closed && t.to == states.paid ? " with no refund flagged" : ""));
  }
}

}  // namespace twice::check
