// throw-on-repaid (a public incident): compare-and-swap, but an order already
// PAID by another transaction "cannot happen", so it throws.
//
// BUG (lost_payment): a user pays one order over two channels. The second
// success callback throws, rolls back, answers 500, and the gateway retries it
// until it gives up; the second payment is never refunded.
#include <stdexcept>

#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class ThrowOnRepaid final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return Reply::fail();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    if (order.status == "PAID" && order.transaction_id != n.transaction_id)
      throw std::logic_error("order " + n.out_trade_no + " paid twice?");
    const Result swapped = db.exec(
        "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
        {n.transaction_id, n.out_trade_no});
    if (!swapped.ok()) return Reply::fail();
    if (swapped.changes == 0) return settle_unswapped(db, tx, order, n);
    if (!credit(db, n, order.user).ok() || !tx.commit().ok()) return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::ThrowOnRepaid, "throw-on-repaid",
                       "incident: throws on a second payment for a paid order; it is retried, never refunded");
