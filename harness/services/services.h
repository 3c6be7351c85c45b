// Services: the run's external services (warehouse, mail, inventory, a
// scenario's own), as the merchant's code reaches them through Env::call().
// Each call is served on the calling task after its scheduling point: a slow
// service sleeps on the virtual clock first (other tasks run meanwhile); then
// the service fails before acting, or applies the request (twice, when the
// request reaches it twice), and may answer with a timeout although it acted.
// A service that honours idempotency keys answers a key it saw within its
// retention window with the first answer and applies nothing.
//
// What the services applied is recorded here, by the harness: the checker's
// ground truth for duplicate_effect, lost_effect and effect_without_payment,
// never what the handler believes it did. Every fault is drawn through the
// FaultPlan, so a run stays a function of its seed.
// Owned by one run; called only by the task holding the baton.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "env/service_port.h"
#include "fault/fault_plan.h"
#include "gateway/scenario.h"
#include "sim/scheduler.h"

namespace twice::services {

// One effect a service applied: one shipment, one mail, one unit of stock.
struct AppliedEffect {
  Micros at = 0;
  int task = 0;  // the task whose call it was
  std::string service, effect, order_no;
  std::string key;  // the call's idempotency key, if any
};

class Services final : public env::ServicePort {
 public:
  Services(const std::vector<gateway::ServiceSpec>& specs, sim::Scheduler& scheduler, fault::FaultPlan& faults);

  ServiceReply call(std::string_view service, const ServiceRequest& request) override;

  // Every effect applied in the run, in the order applied.
  const std::vector<AppliedEffect>& applied() const { return applied_; }

 private:
  struct Remembered {
    Micros at;
    ServiceReply reply;
  };
  struct State {
    const gateway::ServiceSpec* spec;
    std::map<std::string, Remembered> keys;  // idempotency key -> first answer
    std::int64_t stock;
    int served = 0;  // requests applied, for the answers' numbers
  };

  State* find(std::string_view service);
  bool offers(const State& s, std::string_view effect) const;
  // Applies one copy of `request`: records its effects and says what it answered.
  ServiceReply apply(State& s, const ServiceRequest& request, bool copy);
  void record(const State& s, const ServiceRequest& request, std::string what, std::string result);

  std::vector<State> states_;
  sim::Scheduler& scheduler_;
  fault::FaultPlan& faults_;
  std::vector<AppliedEffect> applied_;
};

// The FaultPlan's rates of each service in `specs`.
std::vector<fault::ServiceFaultRates> fault_rates(const std::vector<gateway::ServiceSpec>& specs);

}  // namespace twice::services
