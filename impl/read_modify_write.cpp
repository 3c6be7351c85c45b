// read-modify-write: dedupes correctly (compare-and-swap on the order, in a
// transaction) but loads the account first and writes back
// `balance = <value read earlier> + amount`, as an ORM that loads an entity
// and saves it does.
//
// BUG (lost_update): two different orders of one user paid at once both read
// the same old balance; the second write overwrites the first credit. The
// ledger holds both credits, the balance only one.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class ReadModifyWrite final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    Db& db = env.db();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    const Result account = db.exec("SELECT balance FROM accounts WHERE user_id = ?", {order.user});
    if (!account.ok() || account.empty()) return Reply::fail();
    const std::int64_t balance_read = account.rows[0][0].as_int();

    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) return Reply::fail();
    const Result swapped = db.exec(
        "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
        {n.transaction_id, n.out_trade_no});
    if (!swapped.ok()) return Reply::fail();
    if (swapped.changes == 0) return Reply::ack(n);  // a duplicate: already paid
    if (!db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)",
                 {n.out_trade_no, order.user, n.amount}).ok() ||
        !db.exec("UPDATE accounts SET balance = ? WHERE user_id = ?", {balance_read + n.amount, order.user}).ok() ||
        !tx.commit().ok())
      return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::ReadModifyWrite, "read-modify-write",
                       "correct dedupe, but balance = <value read earlier> + amount (lost_update)");
