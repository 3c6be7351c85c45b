// Env: everything a handler may touch. Handlers call nothing else for I/O,
// time, randomness or locks (no std::chrono, sleep, rand or sqlite3_*): that
// is what makes a run a function of its seed. An Env belongs to one task and
// lives as long as that task's call to Handler::handle.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "twice/clock.h"
#include "twice/db.h"
#include "twice/locks.h"
#include "twice/notify.h"
#include "twice/service.h"
#include "twice/status.h"

namespace twice {

class Env {
 public:
  virtual ~Env() = default;
  virtual Db& db() = 0;
  virtual Locks& locks() = 0;
  virtual Clock& clock() = 0;
  // A token unique within the run and stable across replays ("T3"), e.g. a lock owner.
  virtual std::string token() = 0;
  // Writes a line into the run's trace, beside this task's statements.
  virtual void note(std::string_view text) = 0;

  // Checks the notify's signature against the gateway's secret and, for a
  // gateway whose scheme signs a timestamp with a tolerance (Stripe, WeChat
  // Pay v3), that it is within 5 minutes of now. OK, or an error saying what
  // is wrong. A scheduling point.
  virtual Status verify(const Notify& notify) = 0;
  // The gateway's active query (WeChat query-order, alipay.trade.query): a
  // signed notify describing the payment of `out_trade_no` as the gateway
  // holds it now: a paid notify if it settled one, a refund notify
  // (event_kind() kRefunded) if it has since given that payment back,
  // nullopt if it settled none. A scheduling point (a network call).
  virtual std::optional<Notify> query_payment(std::string_view out_trade_no) = 0;
  // Sends the HTTP response now and keeps running, as a framework that flushes
  // the response before the work is done. handle()'s return value is then
  // ignored. A scheduling point.
  virtual void respond_now(const Reply& reply) = 0;
  // Calls the external service named `service` ("warehouse", "mail",
  // "inventory", or one the scenario declares) with `request`. A scheduling
  // point; it may take a while (the service is slow), and what it applied is
  // recorded by the harness whatever the caller then does. An unknown service
  // or effect is an error reply, and the trace says why.
  virtual ServiceReply call(std::string_view service, const ServiceRequest& request) = 0;
  // The notify as its gateway really sends it: twice::wire(notify, env), in
  // twice/wire.h (kept out of this class so that its layout does not change).
};

}  // namespace twice
