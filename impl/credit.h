// The credit step every reference handler shares once it has decided to pay:
// mark the order PAID, write one ledger row, add the amount to the balance.
// Three statements, each a scheduling point, run on the caller's connection in
// whatever transaction the caller holds (or none: check-then-act's bug).
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
};

OrderRow load_order(Db& db, const std::string& order_no);
// True when the notify is for a known order with the same amount and currency.
bool matches(const OrderRow& order, const Notify& notify);
// INSERT INTO ledger + UPDATE accounts SET balance = balance + amount. Stops at the first error.
Status credit(Db& db, const Notify& notify, const std::string& user);

}  // namespace twice::impl
