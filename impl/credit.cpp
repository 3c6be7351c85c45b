#include "impl/credit.h"

namespace twice::impl {

OrderRow load_order(Db& db, const std::string& order_no) {
  const Result r = db.exec("SELECT user_id, amount, currency, status FROM orders WHERE order_no = ?", {order_no});
  OrderRow o;
  if (!r.ok() || r.empty()) return o;
  o.found = true;
  o.user = r.rows[0][0].as_text();
  o.amount = r.rows[0][1].as_int();
  o.currency = r.rows[0][2].as_text();
  o.status = r.rows[0][3].as_text();
  return o;
}

bool matches(const OrderRow& order, const Notify& notify) {
  return order.found && order.amount == notify.amount && order.currency == notify.currency;
}

Status credit(Db& db, const Notify& notify, const std::string& user) {
  Result r = db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)",
                     {notify.out_trade_no, user, notify.amount});
  if (!r.ok()) return r.status;
  r = db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", {notify.amount, user});
  return r.status;
}

}  // namespace twice::impl
