// outbox: the transactional outbox. The payment's transaction also inserts
// one outbox row per effect (ship, mail, take from stock); the outbox-relay
// job (outbox_relay.cpp) delivers each row later, at least once, with the
// row's id as the idempotency key, and marks it done.
//
// DEFENCE: the intent commits or rolls back with the payment, so a payment
// rolled back never ships and a payment committed is never forgotten (a crash
// after COMMIT leaves the rows for the relay). The relay may call twice (it
// crashed before marking the row, the service timed out after acting), and
// the key makes the second call change nothing: exactly once, as long as the
// service honours keys.
#include "effects.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class Outbox final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    ApplyOptions options;
    options.before_commit = [](Env& e, const Notify& notify) {
      for (const auto& effect : kOrderEffects) {
        const Result r = e.db().exec("INSERT INTO outbox(order_no, service, effect) VALUES (?, ?, ?)",
                                     {notify.out_trade_no, effect.service, effect.effect});
        if (!r.ok()) return r.status;
      }
      return Status::OK();
    };
    return apply_once(n, env, options);
  }
  const Schema& schema() const override { return effects_schema(); }
  std::vector<std::string> jobs() const override { return {"outbox-relay"}; }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::Outbox, "outbox",
                       "writes the effects to an outbox in the payment's transaction; a relay delivers them with keys");
