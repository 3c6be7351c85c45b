// unique-key: INSERT into callback_log (UNIQUE out_trade_no) and credit in one
// transaction. A duplicate's INSERT fails on the constraint: acknowledge it.
//
// DEFENCE: the database's UNIQUE index is the single point of truth, and the
// log row commits or rolls back together with the credit.
// LIMIT: the key is the order, and the order's state is never looked at: a
// second payment for the order is acknowledged and swallowed (lost_payment),
// and a payment for a closed order is credited (illegal_transition).
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class UniqueKey final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return Reply::fail();

    const Result logged = db.exec(
        "INSERT INTO callback_log(out_trade_no, event_id, transaction_id, payload) VALUES (?, ?, ?, ?)",
        {n.out_trade_no, n.event_id, n.transaction_id, n.raw_payload});
    if (logged.status.is_constraint()) return Reply::ack(n);  // seen before: already credited
    if (!logged.ok()) return Reply::fail();

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

TWICE_REGISTER_HANDLER(twice::impl::UniqueKey, "unique-key",
                       "callback_log with UNIQUE out_trade_no, inserted in the credit's transaction");
