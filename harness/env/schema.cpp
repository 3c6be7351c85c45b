#include "env/schema.h"

namespace twice::env {

const std::string& reference_schema() {
  static const std::string kSchema = R"sql(
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
)sql";
  return kSchema;
}

}  // namespace twice::env
