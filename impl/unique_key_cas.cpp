// unique-key+cas: the recommended design. In one transaction: log the callback
// under a UNIQUE key, move the order WAIT_PAY -> PAID with a compare-and-swap,
// credit. Either defence alone stops a duplicate; together they also stop a
// second payment id for the same order and a notify for an order no longer
// waiting.
#include "impl/credit.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class UniqueKeyCas final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    Db& db = env.db();
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return Reply::fail();

    const Result logged = db.exec(
        "INSERT INTO callback_log(out_trade_no, event_id, transaction_id, payload) VALUES (?, ?, ?, ?)",
        {n.out_trade_no, n.event_id, n.transaction_id, n.raw_payload});
    if (logged.status.is_constraint()) return Reply::success();
    if (!logged.ok()) return Reply::fail();

    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    const Result swapped = db.exec(
        "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
        {n.transaction_id, n.out_trade_no});
    if (!swapped.ok() || swapped.changes != 1) return Reply::fail("order not payable");
    if (!credit(db, n, order.user).ok() || !tx.commit().ok()) return Reply::fail();
    return Reply::success();
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::UniqueKeyCas, "unique-key+cas",
                       "UNIQUE callback_log + compare-and-swap on status, one transaction (recommended)");
