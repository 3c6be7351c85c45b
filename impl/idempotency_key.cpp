// idempotency-key: commits the payment (stamping the order's paid_at), then
// calls each service with "<order>:<effect>" as the idempotency key and
// records each confirmed effect in effects_done (each call in a write
// transaction that first re-reads the order: a refund acknowledged in between
// is never shipped). The effect-repair job
// (effect_repair.cpp) redoes, with the same keys, every effect of a paid order
// still unconfirmed ten minutes after its payment.
//
// DEFENCE: the order number makes the key, so every attempt at one effect,
// the handler's own or the repair job's, is the same request to the service:
// a timeout after shipping, a crash before effects_done, a repair that races
// the first call, all end in one shipment. It relies on the services honouring
// keys for at least as long as a repair can take.
#include "effects.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class IdempotencyKey final : public Handler, public RepairableEffects {
 public:
  Reply handle(const Notify& n, Env& env) override {
    bool credited = false;
    const Reply reply = apply_once_stamping_paid_at(n, env, credited);
    if (credited)
      for (const auto& effect : kOrderEffects) (void)perform_if_owed(env, *this, n.out_trade_no, effect);
    return reply;
  }

  ServiceReply perform(Env& env, const std::string& order_no, const OrderEffect& e) override {
    return env.call(e.service, request_for(e, order_no, order_key(order_no, e)));
  }

  const Schema& schema() const override { return effects_schema(); }
  std::vector<std::string> jobs() const override { return {"effect-repair"}; }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::IdempotencyKey, "idempotency-key",
                       "calls after commit with the order number as idempotency key; a repair job redoes the missed");
