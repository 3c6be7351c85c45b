// stock-read-write: idempotency-key's design (keys, effects_done, the
// repair job), except that it takes the unit from stock the way another
// team's inventory API invites: read the quantity, write back <read> - 1,
// straight after the commit.
//
// BUG: a lost update across the service boundary. In a flash sale many
// orders of one SKU are paid at once; two of them read 41 and both write 40,
// and one order's decrement is lost (lost_effect: the inventory never applied
// it). A write carries no key either, so one the repair job makes again after
// a crash takes a second unit (duplicate_effect). The atomic decrement
// idempotency-key uses ("decrement", refused at zero, keyed by order) has
// neither problem. Its calls, unlike idempotency-key's, are not made in a
// transaction that re-reads the order first: a refund acknowledged while a
// slow call is in flight still ships (effect_without_payment,
// refund-races-shipment).
#include <charconv>

#include "effects.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class StockReadWrite final : public Handler, public RepairableEffects {
 public:
  Reply handle(const Notify& n, Env& env) override {
    bool credited = false;
    const Reply reply = apply_once_stamping_paid_at(n, env, credited);
    if (credited)
      // Straight after the commit, outside any transaction: the inventory is
      // another team's API, and its read and write are two calls of their own.
      for (const auto& effect : kOrderEffects)
        if (perform(env, n.out_trade_no, effect).ok()) (void)mark_done(env.db(), n.out_trade_no, effect);
    return reply;
  }

  ServiceReply perform(Env& env, const std::string& order_no, const OrderEffect& e) override {
    if (std::string_view(e.effect) != "decrement")
      return env.call(e.service, request_for(e, order_no, order_key(order_no, e)));
    const ServiceReply read = env.call(e.service, ServiceRequest{"read", order_no, {}, {}});
    if (!read.ok()) return read;
    std::int64_t qty = 0;
    const std::string& b = read.body;  // "qty 41"
    if (b.size() < 5 || std::from_chars(b.data() + 4, b.data() + b.size(), qty).ec != std::errc())
      return {Status::error("inventory: cannot read \"" + b + "\""), {}};
    if (qty <= 0) return {Status::error("inventory: out of stock"), read.body};
    return env.call(e.service, ServiceRequest{"write", order_no, std::to_string(qty - 1), {}});
  }

  const Schema& schema() const override { return effects_schema(); }
  std::vector<std::string> jobs() const override { return {"effect-repair"}; }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::StockReadWrite, "stock-read-write",
                       "takes stock by reading the quantity and writing <read> - 1 back: a lost decrement");
