// Network: the simulated wire between the gateway and the merchant's
// endpoint. It carries each gateway Request to the Endpoint, and on the way
// loses it, delays it (so notifications reorder) or duplicates it, as the
// FaultPlan draws; on the way back it may lose the merchant's reply. An
// attacker's request goes straight through.
// Runs on the scheduler's side, or on the task holding the baton.
#pragma once

#include <functional>
#include <string>

#include "endpoint/endpoint.h"
#include "fault/fault_plan.h"
#include "gateway/transport.h"
#include "sim/scheduler.h"

namespace twice::net {

class Network final : public gateway::Transport {
 public:
  Network(sim::Scheduler& scheduler, fault::FaultPlan& faults, endpoint::Endpoint& merchant)
      : scheduler_(scheduler), faults_(faults), merchant_(merchant) {}

  int send(gateway::Request request) override;
  void inject(const Notify& notify, std::string task_name, std::string invalid_reason) override;
  // Does the reply to a request make it back to the gateway? `what` says
  // which request, as the gateway describes it; called only for the trace.
  bool reply_arrives(const std::function<std::string()>& what);

 private:
  sim::Scheduler& scheduler_;
  fault::FaultPlan& faults_;
  endpoint::Endpoint& merchant_;
};

}  // namespace twice::net
