// wallet-topup: the fixed version. In one transaction, move the payment from
// 'pending' to 'paid' with a compare-and-swap, and credit only if this delivery
// made that move; any other copy finds nothing to move and just acknowledges.
// Before anything, the signature is checked, and the amount and currency must
// be the order's. Not every notify is a payment: a trade the gateway closed
// unpaid closes the order, and a refund takes the credit back, once.
#include <twice/handler.h>

#include "wallet_schema.h"

namespace {

class WalletTopup final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    if (!env.verify(n).ok()) return twice::Reply::fail("bad signature");
    switch (twice::event_kind(n)) {
      case twice::EventKind::kPaid: return pay(n, env);
      case twice::EventKind::kRefunded: return refund(n, env);
      case twice::EventKind::kClosed: {
        const twice::Result closed = env.db().exec(
            "UPDATE payments SET state = 'closed' WHERE order_no = ? AND state = 'pending'", {n.out_trade_no});
        return closed.ok() ? twice::Reply::ack(n) : twice::Reply::fail();
      }
      default: return twice::Reply::ack(n);  // an event we do not use
    }
  }

  const twice::Schema& schema() const override { return wallet_schema(); }

 private:
  twice::Reply pay(const twice::Notify& n, twice::Env& env) {
    twice::Db& db = env.db();
    auto tx = db.begin(twice::TxMode::kImmediate);  // rolls back unless committed
    if (!tx.ok()) return twice::Reply::fail();

    const twice::Result payment = db.exec(
        "SELECT user_id FROM payments WHERE order_no = ? AND amount = ? AND currency = ?",
        {n.out_trade_no, n.amount, n.currency});
    if (!payment.ok() || payment.empty()) return twice::Reply::fail("unknown order or wrong amount");
    const std::string user = payment.at(0, "user_id").as_text();

    const twice::Result moved = db.exec(
        "UPDATE payments SET state = 'paid', gateway_id = ? WHERE order_no = ? AND state = 'pending'",
        {n.transaction_id, n.out_trade_no});
    if (!moved.ok()) return twice::Reply::fail();
    if (moved.changes == 0) {
      // Paid before. The same payment again (a duplicate, a retry, its second
      // event) is acknowledged; another payment for this order is queued for refund.
      const twice::Result paid = db.exec("SELECT gateway_id FROM payments WHERE order_no = ?", {n.out_trade_no});
      if (!paid.ok() || paid.empty()) return twice::Reply::fail();
      if (paid.at(0, "gateway_id").as_text() == n.transaction_id) return twice::Reply::ack(n);
      // "Insert unless there": each engine says it its own way (Db::engine()).
      const char* flag = db.engine() == twice::Engine::kPostgres
                             ? "INSERT INTO refunds(gateway_id, order_no) VALUES (?, ?) ON CONFLICT DO NOTHING"
                             : "INSERT OR IGNORE INTO refunds(gateway_id, order_no) VALUES (?, ?)";
      if (!db.exec(flag, {n.transaction_id, n.out_trade_no}).ok() ||
          !tx.commit().ok())
        return twice::Reply::fail();
      return twice::Reply::ack(n);
    }

    if (!db.exec("INSERT INTO wallet_credits(order_no, user_id, amount) VALUES (?, ?, ?)",
                 {n.out_trade_no, user, n.amount}).ok() ||
        !db.exec("UPDATE wallets SET balance = balance + ? WHERE user_id = ?", {n.amount, user}).ok() ||
        !tx.commit().ok())
      return twice::Reply::fail();
    return twice::Reply::ack(n);
  }

  // The same compare-and-swap, from 'paid' to 'refunded': of any number of
  // copies of the refund, one takes the credit back.
  twice::Reply refund(const twice::Notify& n, twice::Env& env) {
    twice::Db& db = env.db();
    auto tx = db.begin(twice::TxMode::kImmediate);
    if (!tx.ok()) return twice::Reply::fail();
    const twice::Result payment =
        db.exec("SELECT user_id, state FROM payments WHERE order_no = ? AND amount = ? AND currency = ?",
                {n.out_trade_no, n.refund_amount, n.currency});
    if (!payment.ok() || payment.empty()) return twice::Reply::fail("unknown order or wrong amount");
    const std::string user = payment.at(0, "user_id").as_text();
    const twice::Result moved = db.exec(
        "UPDATE payments SET state = 'refunded' WHERE order_no = ? AND state = 'paid' AND gateway_id = ?",
        {n.out_trade_no, n.transaction_id});
    if (!moved.ok()) return twice::Reply::fail();
    if (moved.changes == 0) {
      // Refunded before: a copy. Still pending: the refund overtook its
      // payment's notify; answer 5xx so that the gateway tries again later.
      if (payment.at(0, "state").as_text() == "pending") return twice::Reply::fail("payment not seen yet");
      return twice::Reply::ack(n);
    }
    if (!db.exec("INSERT INTO wallet_credits(order_no, user_id, amount) VALUES (?, ?, ?)",
                 {n.out_trade_no, user, -n.refund_amount}).ok() ||
        !db.exec("UPDATE wallets SET balance = balance - ? WHERE user_id = ?", {n.refund_amount, user}).ok() ||
        !tx.commit().ok())
      return twice::Reply::fail();
    return twice::Reply::ack(n);
  }
};

}  // namespace

TWICE_REGISTER_HANDLER(WalletTopup, "wallet-topup", "compare-and-swap on the state, credit, one transaction");
