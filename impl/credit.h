// What every reference handler shares once it has decided what to do: load
// the order, compare it with the notify, credit it, or flag its payment for
// refund. Each statement is a scheduling point, run on the caller's connection
// in whatever transaction the caller holds (or none: check-then-act's bug).
#pragma once

#include "twice/env.h"
#include "twice/notify.h"

namespace twice::impl {

// The order as the merchant knows it.
struct OrderRow {
  bool found = false;
  std::string user;
  std::int64_t amount = 0;
  std::string currency;
  std::string status;
  std::string transaction_id;
};

OrderRow load_order(Db& db, const std::string& order_no);
// True when the notify is for a known order with the same amount and currency.
bool matches(const OrderRow& order, const Notify& notify);
// INSERT INTO ledger + UPDATE accounts SET balance = balance + amount. Stops at the first error.
Status credit(Db& db, const Notify& notify, const std::string& user);
// The same with an amount other than the notify's (amount-in-yuan's bug): the
// same two statements, so the ledger and the balance agree with each other.
Status credit(Db& db, const Notify& notify, const std::string& user, std::int64_t amount);
// The payment cannot be kept (the order was closed, or already paid by another
// transaction): record that it must be refunded. Idempotent.
Status flag_refund(Db& db, const Notify& notify, const std::string& reason);
// After a compare-and-swap changed no row: acknowledge a duplicate, flag a
// payment that arrived for a closed order or a second payment, refuse the rest.
// Commits `tx` when it flags a refund.
Reply settle_unswapped(Db& db, Transaction& tx, const OrderRow& order, const Notify& notify);

}  // namespace twice::impl
