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
  paid_at        INTEGER
);
CREATE TABLE accounts (
  user_id TEXT PRIMARY KEY,
  balance INTEGER NOT NULL DEFAULT 0
);
-- One row per credit: the checker counts credits here, never in the handler's reply.
CREATE TABLE ledger (
  id         INTEGER PRIMARY KEY,
  order_no   TEXT NOT NULL,
  user_id    TEXT NOT NULL,
  amount     INTEGER NOT NULL,
  created_at INTEGER
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
      "SELECT order_no, COUNT(*) FROM ledger GROUP BY order_no ORDER BY order_no",
      "SELECT a.user_id, a.balance, COALESCE((SELECT SUM(l.amount) FROM ledger l WHERE l.user_id = a.user_id), 0) "
      "FROM accounts a ORDER BY a.user_id",
  };
  return kSchema;
}

}  // namespace twice
