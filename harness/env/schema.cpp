#include "twice/schema.h"

namespace twice {

const Schema& reference_schema() {
  static const Schema kSchema{
      R"sql(
CREATE TABLE orders (
  order_no       TEXT PRIMARY KEY,
  user_id        TEXT NOT NULL,
  amount         INTEGER NOT NULL,          -- minor units
  currency       TEXT NOT NULL,
  status         TEXT NOT NULL DEFAULT 'WAIT_PAY'
                 CHECK (status IN ('WAIT_PAY', 'PAID', 'CLOSED', 'REFUNDED')),
  transaction_id TEXT,
  paid_at        INTEGER,
  created_at     INTEGER NOT NULL DEFAULT 0   -- virtual microseconds; every order exists from the start
);
CREATE TABLE accounts (
  user_id TEXT PRIMARY KEY,
  balance INTEGER NOT NULL DEFAULT 0
);
-- One row per credit (amount > 0), and one per credit taken back because the
-- gateway refunded the payment (amount < 0). The checker counts them here,
-- never in the handler's reply.
CREATE TABLE ledger (
  id         INTEGER PRIMARY KEY,
  order_no   TEXT NOT NULL,
  user_id    TEXT NOT NULL,
  amount     INTEGER NOT NULL,
  created_at INTEGER
);
-- Payments the merchant must give back (paid after the order was closed).
CREATE TABLE refunds (
  id             INTEGER PRIMARY KEY,
  order_no       TEXT NOT NULL UNIQUE,
  transaction_id TEXT,
  amount         INTEGER NOT NULL,
  reason         TEXT
);
-- Kept by the harness, not the handler: every status change, for the checker.
CREATE TABLE twice_status_history (
  id          INTEGER PRIMARY KEY,
  order_no    TEXT NOT NULL,
  from_status TEXT NOT NULL,
  to_status   TEXT NOT NULL
);
CREATE TRIGGER twice_status_change AFTER UPDATE OF status ON orders
WHEN OLD.status <> NEW.status
BEGIN
  INSERT INTO twice_status_history(order_no, from_status, to_status) VALUES (OLD.order_no, OLD.status, NEW.status);
END;
-- Referral rebates paid out per order: exactly once per paid order.
CREATE TABLE rebates (
  id       INTEGER PRIMARY KEY,
  order_no TEXT NOT NULL,
  referrer TEXT NOT NULL,
  amount   INTEGER NOT NULL
);
-- Event-id dedupe (one row per gateway event id).
CREATE TABLE processed_events (
  event_id TEXT PRIMARY KEY,
  order_no TEXT NOT NULL
);
CREATE TABLE callback_log (
  id             INTEGER PRIMARY KEY,
  out_trade_no   TEXT NOT NULL UNIQUE,
  event_id       TEXT,
  transaction_id TEXT,
  payload        TEXT,
  received_at    INTEGER
);
)sql",
      "INSERT INTO orders(order_no, user_id, amount, currency) VALUES (?1, ?2, ?3, ?4)",
      "INSERT INTO accounts(user_id, balance) VALUES (?1, 0)",
      // A rebate paid twice is a double credit too: count whichever is larger.
      "SELECT order_no, MAX(n) FROM (SELECT order_no, COUNT(*) AS n FROM ledger WHERE amount > 0 GROUP BY order_no "
      "UNION ALL SELECT order_no, COUNT(*) FROM rebates GROUP BY order_no) GROUP BY order_no ORDER BY order_no",
      "SELECT a.user_id, a.balance, COALESCE((SELECT SUM(l.amount) FROM ledger l WHERE l.user_id = a.user_id), 0) "
      "FROM accounts a ORDER BY a.user_id",
      "SELECT order_no FROM refunds ORDER BY order_no",
      "SELECT order_no, status FROM orders ORDER BY order_no",
      "SELECT order_no, from_status, to_status FROM twice_status_history ORDER BY id",
      "SELECT out_trade_no FROM callback_log WHERE payload IS NOT NULL AND payload <> '' ORDER BY out_trade_no",
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount < 0 GROUP BY order_no ORDER BY order_no",
      Schema::OrderStates{},
  };
  return kSchema;
}

}  // namespace twice
