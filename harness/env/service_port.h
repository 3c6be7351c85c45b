// ServicePort: how a task's Env reaches the run's external services
// (warehouse, mail, inventory, a scenario's own). The run's wiring implements
// it with services::Services; a test may pass a fake. Called only by the task
// holding the baton, after its scheduling point.
#pragma once

#include <string_view>

#include "twice/service.h"

namespace twice::env {

class ServicePort {
 public:
  virtual ~ServicePort() = default;
  // Serves one call of the current task: may sleep on the scheduler (a slow
  // service), applies and records the effect, and answers.
  virtual ServiceReply call(std::string_view service, const ServiceRequest& request) = 0;
};

}  // namespace twice::env
