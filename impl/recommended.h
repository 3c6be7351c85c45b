// The recommended design's core, shared by the handlers built on it: in one
// transaction, log the callback under a UNIQUE key, move the order
// WAIT_PAY -> PAID with a compare-and-swap, credit; a duplicate is
// acknowledged, a second payment or a payment for a closed order is flagged for
// refund. The signature is verified first. Variants switch one defence off to
// show what it was for.
#pragma once

#include <functional>

#include "twice/env.h"
#include "twice/notify.h"

namespace twice::impl {

struct ApplyOptions {
  bool check_amount = true;  // false: no-amount-check's bug
  bool verify = true;
  bool dispatch_events = true;  // false: no-event-check's bug (every notify is a payment)
  // The amount the credit writes to the ledger and the balance, when it is not
  // the notify's own: amount-in-yuan's bug. Empty: the notify's amount.
  std::function<std::int64_t(const Notify&)> credit_amount = {};
  // Runs inside the payment's transaction, after the credit and before COMMIT
  // (an outbox row, a call made too early); an error rolls the whole
  // transaction back and the delivery fails.
  std::function<Status(Env&, const Notify&)> before_commit = {};
  // Set to true when this delivery committed the order's credit (the one
  // that moved it WAIT_PAY -> PAID), for work that follows the commit.
  bool* credited = nullptr;
};

Reply apply_once(const Notify& notify, Env& env, const ApplyOptions& options = {});

}  // namespace twice::impl
