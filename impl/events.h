// What the reference handlers do with a notify that is not a payment. A refund
// the gateway settled takes the order's credit back, once; a trade the gateway
// closed unpaid closes the order. Each is a compare-and-swap on the order's
// status inside one transaction, so duplicates, retries and concurrent copies
// change nothing twice. Event types nobody handles are acknowledged and
// ignored, as Stripe asks of its endpoints.
//
// Every reference handler starts with
//   if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
// so that each file shows its own design of the payment path; the canaries
// no-event-check and refund-check-then-act get this part wrong on purpose.
#pragma once

#include "twice/env.h"
#include "twice/notify.h"

namespace twice::impl {

Reply handle_other_event(const Notify& notify, Env& env);
// INSERT INTO ledger a negative row + UPDATE accounts SET balance = balance - amount.
Status reverse_credit(Db& db, const Notify& notify, const std::string& user);

}  // namespace twice::impl
