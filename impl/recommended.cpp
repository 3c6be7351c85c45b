#include "recommended.h"

#include "credit.h"
#include "events.h"

namespace twice::impl {

Reply apply_once(const Notify& n, Env& env, const ApplyOptions& options) {
  if (options.dispatch_events && event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
  if (options.verify && !env.verify(n).ok()) return Reply::fail("bad signature");
  Db& db = env.db();
  auto tx = db.begin(TxMode::kImmediate);
  if (!tx.ok()) return Reply::fail();

  // A failed statement aborts a server engine's whole transaction; a
  // savepoint keeps the rest of it usable after the duplicate key.
  const bool server = db.engine() != Engine::kSqlite;
  if (server && !db.exec("SAVEPOINT callback_log").ok()) return Reply::fail();
  const Result logged = db.exec(
      "INSERT INTO callback_log(out_trade_no, event_id, transaction_id, payload) VALUES (?, ?, ?, ?)",
      {n.out_trade_no, n.event_id, n.transaction_id, n.raw_payload});
  if (server && !db.exec(logged.ok() ? "RELEASE SAVEPOINT callback_log" : "ROLLBACK TO SAVEPOINT callback_log").ok())
    return Reply::fail();
  if (logged.status.is_constraint()) {
    // Seen this order before: the same payment again, or a second payment for it.
    const Result seen = db.exec("SELECT transaction_id FROM callback_log WHERE out_trade_no = ?", {n.out_trade_no});
    if (seen.ok() && !seen.empty() && seen.rows[0][0].as_text() == n.transaction_id) return Reply::ack(n);
  } else if (!logged.ok()) {
    return Reply::fail();
  }

  const OrderRow order = load_order(db, n.out_trade_no);
  if (!order.found || (options.check_amount && !matches(order, n))) return Reply::fail("unknown order or amount mismatch");
  const Result swapped = db.exec(
      "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
      {n.transaction_id, n.out_trade_no});
  if (!swapped.ok()) return Reply::fail();
  if (swapped.changes == 0) return settle_unswapped(db, tx, order, n);
  const std::int64_t amount = options.credit_amount ? options.credit_amount(n) : n.amount;
  if (!credit(db, n, order.user, amount).ok()) return Reply::fail();
  if (options.before_commit && !options.before_commit(env, n).ok()) return Reply::fail();
  if (!tx.commit().ok()) return Reply::fail();
  if (options.credited) *options.credited = true;
  return Reply::ack(n);
}

}  // namespace twice::impl
