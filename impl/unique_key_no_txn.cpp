// unique-key-no-txn: the unique key, but the log row commits on its own before
// the credit runs, in autocommit statements.
//
// BUG (lost_payment): a crash after the log INSERT and before the credit
// leaves the order unpaid; the gateway's retry hits the UNIQUE key, is taken
// for a duplicate and acknowledged. The payment is lost for good.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class UniqueKeyNoTxn final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    const Result logged = db.exec(
        "INSERT INTO callback_log(out_trade_no, event_id, transaction_id, payload) VALUES (?, ?, ?, ?)",
        {n.out_trade_no, n.event_id, n.transaction_id, n.raw_payload});
    if (logged.status.is_constraint()) return Reply::ack(n);  // "already processed"
    if (!logged.ok()) return Reply::fail();

    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    auto tx = db.begin(TxMode::kImmediate);
    const Result swapped = db.exec(
        "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
        {n.transaction_id, n.out_trade_no});
    if (!tx.ok() || !swapped.ok()) return Reply::fail();
    if (swapped.changes == 1 && (!credit(db, n, order.user).ok() || !tx.commit().ok())) return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::UniqueKeyNoTxn, "unique-key-no-txn",
                       "canary: the dedupe log commits before the credit (a crash between: lost_payment)");
