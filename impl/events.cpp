#include "events.h"

#include "credit.h"

namespace twice::impl {
namespace {

Reply apply_refund(const Notify& n, Env& env) {
  Db& db = env.db();
  auto tx = db.begin(TxMode::kImmediate);
  if (!tx.ok()) return Reply::fail();
  const OrderRow order = load_order(db, n.out_trade_no);
  if (!order.found || order.amount != n.refund_amount || order.currency != n.currency)
    return Reply::fail("unknown order or refund amount mismatch");
  const Result swapped = db.exec(
      "UPDATE orders SET status = 'REFUNDED' WHERE order_no = ? AND status = 'PAID' AND transaction_id = ?",
      {n.out_trade_no, n.transaction_id});
  if (!swapped.ok()) return Reply::fail();
  if (swapped.changes == 0) {
    if (order.status == "REFUNDED") return Reply::ack(n);  // a duplicate
    // The refund overtook its payment's notification (Stripe: "in any
    // order"): refuse, and let the gateway retry once the payment is in.
    if (order.status == "WAIT_PAY") return Reply::fail("refund before its payment; retry later");
    // CLOSED: the payment came after the close and was flagged for refund;
    // this is that refund going through, and nothing was credited.
    return Reply::ack(n);
  }
  if (!reverse_credit(db, n, order.user).ok() || !tx.commit().ok()) return Reply::fail();
  return Reply::ack(n);
}

Reply apply_close(const Notify& n, Env& env) {
  // One statement: atomic on its own. A paid order stays paid.
  const Result closed =
      env.db().exec("UPDATE orders SET status = 'CLOSED' WHERE order_no = ? AND status = 'WAIT_PAY'", {n.out_trade_no});
  return closed.ok() ? Reply::ack(n) : Reply::fail();
}

}  // namespace

Reply handle_other_event(const Notify& n, Env& env) {
  if (!env.verify(n).ok()) return Reply::fail("bad signature");
  switch (event_kind(n)) {
    case EventKind::kRefunded: return apply_refund(n, env);
    case EventKind::kClosed: return apply_close(n, env);
    default: return Reply::ack(n);
  }
}

Status reverse_credit(Db& db, const Notify& n, const std::string& user) {
  Result r = db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)",
                     {n.out_trade_no, user, -n.refund_amount});
  if (!r.ok()) return r.status;
  r = db.exec("UPDATE accounts SET balance = balance - ? WHERE user_id = ?", {n.refund_amount, user});
  return r.status;
}

}  // namespace twice::impl
