#include "wallet_schema.h"

const twice::Schema& wallet_schema() {
  // Field by field: Schema has more optional oracle queries (statuses,
  // transitions, payloads), left empty here, which switches their checks off.
  // A wallet that takes refunds fills in reversals_sql, below.
  static const twice::Schema schema = [] {
    twice::Schema s;
    s.setup_sql = R"sql(
CREATE TABLE payments (
  order_no   TEXT PRIMARY KEY,
  user_id    TEXT NOT NULL,
  amount     INTEGER NOT NULL,            -- cents
  currency   TEXT NOT NULL,
  state      TEXT NOT NULL DEFAULT 'pending',
  gateway_id TEXT                          -- the gateway's transaction id, once paid
);
CREATE TABLE wallets (
  user_id TEXT PRIMARY KEY,
  balance INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE wallet_credits (
  id       INTEGER PRIMARY KEY,
  order_no TEXT NOT NULL,
  user_id  TEXT NOT NULL,
  amount   INTEGER NOT NULL
);
-- A second payment for an order already paid (the user paid again on another
-- device) is not credited: it is queued here to be refunded.
CREATE TABLE refunds (
  gateway_id TEXT PRIMARY KEY,
  order_no   TEXT NOT NULL
);
)sql";
    // How twice seeds a run: ?1 order_no, ?2 user, ?3 amount, ?4 currency.
    s.insert_order_sql = "INSERT INTO payments(order_no, user_id, amount, currency) VALUES (?1, ?2, ?3, ?4)";
    s.insert_account_sql = "INSERT INTO wallets(user_id) VALUES (?1)";
    // Where the truth is: how often each order was credited ...
    // (a refund's row is negative: it takes a credit back, it is not one).
    s.credits_sql = "SELECT order_no, COUNT(*) FROM wallet_credits WHERE amount > 0 GROUP BY order_no";
    // ... how often each order's credit was taken back by a refund ...
    s.reversals_sql = "SELECT order_no, COUNT(*) FROM wallet_credits WHERE amount < 0 GROUP BY order_no";
    // ... and each wallet's balance beside the sum of its credits.
    s.balances_sql =
        "SELECT w.user_id, w.balance, "
        "COALESCE((SELECT SUM(c.amount) FROM wallet_credits c WHERE c.user_id = w.user_id), 0) FROM wallets w";
    // ... and which orders have a payment waiting to be refunded.
    s.refunds_sql = "SELECT DISTINCT order_no FROM refunds";
    return s;
  }();
  return schema;
}
