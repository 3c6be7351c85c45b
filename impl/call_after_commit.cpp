// call-after-commit: commits the payment first, then ships, mails and takes
// the unit from stock; a failed call is logged and forgotten, since the
// payment itself is safe.
//
// BUG: nothing remembers that the calls are still owed. A crash between
// COMMIT and the call, or a service that is down at that moment, leaves a
// paid order that never ships (lost_effect): the gateway's retry finds the
// payment already applied and only acknowledges it. Without idempotency keys,
// a mail service that delivers twice mails twice (duplicate_effect). And it
// ships without reading the order again: a refund acknowledged while a slow
// call is in flight still ships (effect_without_payment, refund-races-shipment).
#include "effects.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class CallAfterCommit final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    bool credited = false;
    ApplyOptions options;
    options.credited = &credited;
    const Reply reply = apply_once(n, env, options);
    if (credited)
      for (const auto& effect : kOrderEffects)
        if (ServiceReply r = env.call(effect.service, request_for(effect, n.out_trade_no)); !r.ok())
          env.note("call failed, not retried: " + r.status.message());
    return reply;
  }
  const Schema& schema() const override { return effects_schema(); }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::CallAfterCommit, "call-after-commit",
                       "commits the payment, then calls the services once; a crash or a failed call loses the effect");
