// three-layer: a Redis lock (owner token, TTL, compare-and-delete release) in
// front, then the unique key and the optimistic status update in one
// transaction. The lock only sheds load; the database layers carry the
// guarantee, so an expired lock costs nothing.
#include "impl/credit.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class ThreeLayer final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    const std::string key = "lock:order:" + n.out_trade_no;
    const std::string owner = env.token();
    if (!env.locks().set_if_absent(key, owner, 10 * kSecond)) return Reply::fail("busy, retry later");
    const Reply reply = apply(n, env.db());
    env.locks().compare_and_delete(key, owner);
    return reply;
  }

 private:
  static Reply apply(const Notify& n, Db& db) {
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

TWICE_REGISTER_HANDLER(twice::impl::ThreeLayer, "three-layer",
                       "lock + unique key + optimistic status update; the lock only sheds load");
