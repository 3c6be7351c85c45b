// key-every-delivery: applies the payment with the recommended path, then on
// every delivery it acknowledges, a duplicate included, calls each service
// with "<order>:<effect>" as the idempotency key, and leaves deduplication to
// the services.
//
// BUG: it is exactly once only while every service honours keys, and only
// within their retention window. Against a service that ignores them, each
// duplicate callback the gateway sends ships the goods again
// (duplicate_effect); and a handler slow enough that the gateway still
// retries a day later (WeChat's schedule runs past 24 h) calls after the
// warehouse forgot the key, and ships again. Where keys are honoured and
// retries stop in time it passes, and a crash after COMMIT is repaired by the
// gateway's next retry. It calls without reading the order again, so a refund
// acknowledged while a slow call is in flight still ships
// (effect_without_payment, refund-races-shipment).
#include "effects.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class KeyEveryDelivery final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    const Reply reply = apply_once(n, env);
    if (reply.http_status != 200 || event_kind(n) != EventKind::kPaid) return reply;
    const Result status = env.db().exec("SELECT status FROM orders WHERE order_no = ?", {n.out_trade_no});
    if (!status.ok() || status.empty() || status.rows[0][0].as_text() != "PAID") return reply;
    for (const auto& effect : kOrderEffects)
      if (!env.call(effect.service, request_for(effect, n.out_trade_no, order_key(n.out_trade_no, effect))).ok())
        return Reply::fail("a service call failed; retry");
    return reply;
  }
  const Schema& schema() const override { return effects_schema(); }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::KeyEveryDelivery, "key-every-delivery",
                       "calls the services on every acknowledged delivery, duplicates included; relies on their keys");
