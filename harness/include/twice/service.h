// Service calls: what a handler (or a job) asks of an external service, a
// warehouse, a mail service, another team's inventory API, through
// Env::call(). Such a call cannot join the payment's transaction: it can fail
// before the service acts, time out after it acted, or be made and then the
// transaction rolls back. The simulated services record what they applied;
// the checker judges that record (duplicate_effect, lost_effect,
// effect_without_payment), never what the handler believes it did.
// Plain data; safe to copy between threads.
#pragma once

#include <string>

#include "twice/status.h"

namespace twice {

struct ServiceRequest {
  // What the call asks for: an effect the service declares ("ship" for the
  // warehouse, "mail" for the mail service, "decrement" for inventory), or
  // one of the service's queries (inventory's "read" and "write").
  std::string effect;
  // Whose effect it is: the order the shipment, mail or decrement belongs to.
  std::string order_no;
  // Free text the service keeps and the trace shows (an address, a quantity).
  std::string body;
  // Empty: none. A service that honours keys (Stripe-style) answers a repeated
  // key with the first answer and applies nothing, within its retention window.
  std::string idempotency_key;
};

struct ServiceReply {
  // OK: the service applied the request (or had, under the same key). An
  // error says what the caller saw: "warehouse: unavailable" (nothing was
  // applied) or "warehouse: timed out" (the caller cannot tell; the effect
  // may well have happened).
  Status status;
  std::string body;  // the answer: "shipment S-3", inventory's "qty 41"

  bool ok() const { return status.ok(); }
};

}  // namespace twice
