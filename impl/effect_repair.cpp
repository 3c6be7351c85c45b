// effect-repair: every minute, finds paid orders whose effects the services
// have not confirmed (no effects_done row) ten minutes after the payment, and
// performs each again through the handler's own way of doing it
// (RepairableEffects), with the same idempotency key.
//
// Each repair runs in a write transaction that first re-reads the order, so a
// refund recorded meanwhile waits for it, and a refunded order is left alone.
// The ten minutes keep the repair from racing the handler's own first call:
// against a service that ignores keys, that race would ship twice.
#include <string>

#include "effects.h"
#include "twice/job.h"

namespace twice::impl {
namespace {

class EffectRepair final : public Job {
 public:
  explicit EffectRepair(Micros) {}
  Micros interval() const override { return kMinute; }

  void run(Env& env, Handler& handler) override {
    auto* repairable = dynamic_cast<RepairableEffects*>(&handler);
    if (!repairable) return;
    const Micros cutoff = env.clock().now() - 10 * kMinute;
    const Result paid =
        env.db().exec("SELECT order_no FROM orders WHERE status = 'PAID' AND paid_at <= ? ORDER BY order_no", {cutoff});
    if (!paid.ok()) return;
    for (const auto& row : paid.rows)
      for (const auto& effect : kOrderEffects) repair(env, *repairable, row[0].as_text(), effect);
  }

 private:
  static void repair(Env& env, RepairableEffects& handler, const std::string& order_no, const OrderEffect& effect) {
    Db& db = env.db();
    const Result done =
        db.exec("SELECT 1 FROM effects_done WHERE order_no = ? AND effect = ?", {order_no, effect.effect});
    if (!done.ok() || !done.empty()) return;
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return;
    const Result order = db.exec("SELECT status FROM orders WHERE order_no = ?", {order_no});
    if (!order.ok() || order.empty() || order.rows[0][0].as_text() != "PAID") return;
    const ServiceReply reply = handler.perform(env, order_no, effect);
    const bool refused = !reply.ok() && reply.status.message().find("out of stock") != std::string::npos;
    if (!reply.ok() && !refused) return;  // tried again next minute
    if (mark_done(db, order_no, effect).ok()) (void)tx.commit();
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_JOB(twice::impl::EffectRepair, "effect-repair",
                   "every minute, redoes unconfirmed effects of orders paid 10 min ago, with the handler's keys");
