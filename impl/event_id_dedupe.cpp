// event-id-dedupe: dedupes on the gateway's event id (processed_events with a
// PRIMARY KEY), in the credit's transaction, without a status check.
//
// BUG (double_credit): one payment can produce two events with different ids
// (Alipay TRADE_SUCCESS then TRADE_FINISHED; Stripe payment_intent.succeeded
// and charge.succeeded). Each passes the dedupe and credits. Dedupe on the
// payment, not on the event.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class EventIdDedupe final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return Reply::fail();
    const Result seen =
        db.exec("INSERT INTO processed_events(event_id, order_no) VALUES (?, ?)", {n.event_id, n.out_trade_no});
    if (seen.status.is_constraint()) return Reply::ack(n);
    if (!seen.ok()) return Reply::fail();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    if (!db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                 {n.transaction_id, n.out_trade_no}).ok() ||
        !credit(db, n, order.user).ok() || !tx.commit().ok())
      return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::EventIdDedupe, "event-id-dedupe",
                       "canary: dedupes on the event id; two events for one payment credit twice");
