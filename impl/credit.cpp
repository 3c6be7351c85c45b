#include "credit.h"

namespace twice::impl {

OrderRow load_order(Db& db, const std::string& order_no) {
  const Result r =
      db.exec("SELECT user_id, amount, currency, status, transaction_id FROM orders WHERE order_no = ?", {order_no});
  OrderRow o;
  if (!r.ok() || r.empty()) return o;
  o.found = true;
  o.user = r.rows[0][0].as_text();
  o.amount = r.rows[0][1].as_int();
  o.currency = r.rows[0][2].as_text();
  o.status = r.rows[0][3].as_text();
  o.transaction_id = r.rows[0][4].as_text();
  return o;
}

bool matches(const OrderRow& order, const Notify& notify) {
  return order.found && order.amount == notify.amount && order.currency == notify.currency;
}

Status credit(Db& db, const Notify& notify, const std::string& user) {
  return credit(db, notify, user, notify.amount);
}

Status credit(Db& db, const Notify& notify, const std::string& user, std::int64_t amount) {
  Result r = db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)",
                     {notify.out_trade_no, user, amount});
  if (!r.ok()) return r.status;
  r = db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", {amount, user});
  return r.status;
}

Status flag_refund(Db& db, const Notify& notify, const std::string& reason) {
  // The same statement in each engine's words for "insert unless the key exists".
  const char* sql = nullptr;
  switch (db.engine()) {
    case Engine::kSqlite:
      sql = "INSERT OR IGNORE INTO refunds(order_no, transaction_id, amount, reason) VALUES (?, ?, ?, ?)";
      break;
    case Engine::kPostgres:
      sql = "INSERT INTO refunds(order_no, transaction_id, amount, reason) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING";
      break;
    case Engine::kMariadb:
      sql = "INSERT IGNORE INTO refunds(order_no, transaction_id, amount, reason) VALUES (?, ?, ?, ?)";
      break;
  }
  return db.exec(sql, {notify.out_trade_no, notify.transaction_id, notify.amount, reason}).status;
}

Reply settle_unswapped(Db& db, Transaction& tx, const OrderRow& order, const Notify& notify) {
  if (order.status == "PAID" && order.transaction_id == notify.transaction_id) return Reply::ack(notify);  // a duplicate
  const bool closed = order.status == "CLOSED";
  const bool second_payment = order.status == "PAID";
  if (!closed && !second_payment) return Reply::fail("order not payable");
  if (!flag_refund(db, notify, closed ? "paid after the order was closed" : "order already paid by another transaction")
           .ok() ||
      !tx.commit().ok())
    return Reply::fail();
  return Reply::ack(notify);
}

}  // namespace twice::impl
