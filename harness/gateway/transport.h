// Transport: how the gateway's requests reach the merchant. The gateway says
// what it sends; the transport (the simulated network) decides what arrives,
// how late and how often, and hands it to the merchant's endpoint. Replies
// come back to the gateway through Gateway::receive(), as values.
// Called on the scheduler's side, or by the task holding the baton.
#pragma once

#include <string>

#include "twice/notify.h"

namespace twice::gateway {

// One attempt of one notification, as the gateway sends it.
struct Request {
  Notify notify;
  int id = 0;             // the attempt: a reply to it comes back with this id
  std::string what;       // "notify O-1 TRANSACTION.SUCCESS attempt 2", for the trace; empty when none is kept
  std::string task_name;  // what the merchant's task serving it is called: "notify O-1 #2"
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Sends `request` on its way; returns how many copies of it reach the
  // merchant (0 when it is lost, more when the network duplicates it).
  // By value: the last copy delivered takes the request's notify over.
  virtual int send(Request request) = 0;
  // An attacker's request, straight to the merchant at once: nobody waits for
  // its reply. `invalid_reason` says what is wrong with it; empty: nothing
  // is (a genuine request replayed where no signed time makes it stale), so
  // it is judged as any duplicate, not as an invalid notify.
  virtual void inject(const Notify& notify, std::string task_name, std::string invalid_reason) = 0;
};

}  // namespace twice::gateway
