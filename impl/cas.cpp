// cas: UPDATE orders SET status='PAID' WHERE order_no=? AND status='WAIT_PAY',
// and credit only if that changed one row, all in one transaction. A payment
// for a closed order, or a second payment, is flagged for refund.
//
// DEFENCE: the state transition is a compare-and-swap; of any number of
// concurrent deliveries exactly one changes the row.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class Cas final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return Reply::fail();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");

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

TWICE_REGISTER_HANDLER(twice::impl::Cas, "cas",
                       "UPDATE ... WHERE status='WAIT_PAY'; credit only if one row changed, one transaction");
