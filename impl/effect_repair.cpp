// effect-repair: every 10 minutes, finds paid orders whose effects the services
// have not confirmed (no effects_done row) ten minutes after the payment, and
// performs each again through the handler's own way of doing it
// (RepairableEffects), with the same idempotency key.
//
// Each repair runs in a write transaction that first re-reads the order and
// effects_done (perform_if_owed), so a refund recorded meanwhile waits for it,
// a refunded order is left alone, and an effect confirmed meanwhile is not
// asked for again. The ten minutes leave the handler's own first call (and
// its crash-free retries) the time to finish first.
#include <iterator>
#include <string>

#include "effects.h"
#include "twice/job.h"

namespace twice::impl {
namespace {

class EffectRepair final : public Job {
 public:
  explicit EffectRepair(Micros) {}
  Micros interval() const override { return 10 * kMinute; }

  void run(Env& env, Handler& handler) override {
    auto* repairable = dynamic_cast<RepairableEffects*>(&handler);
    if (!repairable) return;
    const Micros cutoff = env.clock().now() - 10 * kMinute;
    // Orders paid ten minutes ago with an effect still unconfirmed; perform_if_owed re-checks each.
    const Result paid = env.db().exec(
        "SELECT o.order_no FROM orders o WHERE o.status = 'PAID' AND o.paid_at <= ? AND "
        "(SELECT COUNT(*) FROM effects_done d WHERE d.order_no = o.order_no) < ? ORDER BY o.order_no",
        {cutoff, static_cast<std::int64_t>(std::size(kOrderEffects))});
    if (!paid.ok()) return;
    for (const auto& row : paid.rows)
      for (const auto& effect : kOrderEffects) (void)perform_if_owed(env, *repairable, row[0].as_text(), effect);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_JOB(twice::impl::EffectRepair, "effect-repair",
                   "every 10 min, redoes unconfirmed effects of orders paid 10 min ago, with the handler's keys");
