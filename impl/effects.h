// What the effect handlers share: the side effects a paid order causes beyond
// the database (the goods shipped by the warehouse, a confirmation mail, one
// unit of the flash sale's stock taken from inventory), the tables they keep
// about them (reference schema + outbox + effects_done), and the repair
// job's view of a handler whose effects it can redo.
//
// Each handler in impl/ that calls services builds on apply_once (the
// recommended payment path) and differs only in *when* and *how* it makes the
// calls: that is the whole story of each file.
#pragma once

#include <string>

#include "twice/env.h"
#include "twice/schema.h"

namespace twice::impl {

struct OrderEffect {
  const char* service;
  const char* effect;
};
// In the order a shop does them: ship, mail, take the unit from stock.
inline constexpr OrderEffect kOrderEffects[] = {{"warehouse", "ship"}, {"mail", "mail"}, {"inventory", "decrement"}};

// reference_schema() plus
//   outbox(id, order_no, service, effect, state): intents written in the
//     payment's transaction; state 'pending', 'done', 'refused', 'cancelled';
//   effects_done(order_no, effect): effects a service confirmed, for the repair job.
const Schema& effects_schema();

ServiceRequest request_for(const OrderEffect& e, const std::string& order_no, std::string key = {});
// "O-1:ship": one key per (order, effect), the same on every retry.
std::string order_key(const std::string& order_no, const OrderEffect& e);

// Performs effect `e` of a paid order again, the way its handler does it: what
// the effect-repair job calls for each effect not yet confirmed.
class RepairableEffects {
 public:
  virtual ~RepairableEffects() = default;
  virtual ServiceReply perform(Env& env, const std::string& order_no, const OrderEffect& e) = 0;
};

// The recommended payment path (apply_once) that also stamps orders.paid_at in
// the payment's transaction, which is when the repair job may start to owe
// the order's effects. `credited` says whether this delivery credited.
Reply apply_once_stamping_paid_at(const Notify& n, Env& env, bool& credited);

// Records in effects_done that `e` of `order_no` was confirmed (idempotent).
Status mark_done(Db& db, const std::string& order_no, const OrderEffect& e);

// Performs `e` of `order_no` if it is still owed: in a write transaction
// (BEGIN IMMEDIATE; on a server engine, the order row locked FOR UPDATE) that
// re-reads the order and effects_done first, so a refund recorded meanwhile
// waits for the call, and an order no longer PAID
// (refunded) or already confirmed is left alone; the confirmation commits
// with it. False when the call failed and the effect is still owed.
bool perform_if_owed(Env& env, RepairableEffects& handler, const std::string& order_no, const OrderEffect& e);

}  // namespace twice::impl
