// GatewayPort: what a task's Env may ask of the gateway (verify a signature,
// query a payment, the wire form of a notify), without the environment depending on the gateway module.
// Implemented by gateway::Gateway; called from the task holding the baton.
#pragma once

#include <optional>
#include <string_view>

#include "twice/notify.h"
#include "twice/status.h"
#include "twice/status_or.h"
#include "twice/wire.h"

namespace twice::env {

class GatewayPort {
 public:
  virtual ~GatewayPort() = default;
  virtual Status verify(const Notify& notify) const = 0;
  virtual std::optional<Notify> query_payment(std::string_view out_trade_no) const = 0;
  // twice::wire() and twice::wire_secrets() (twice/wire.h), for TaskEnv.
  virtual StatusOr<WireRequest> wire(const Notify& notify) const = 0;
  virtual const WireSecrets& wire_secrets() const = 0;
};

}  // namespace twice::env
