// FaultPlan: the one owner of injected faults. Every fault of a run (the
// network's duplicates, losses and delays; the process's pauses, crashes and
// restarts; the queue's redeliveries; the gateway's second success signal) is
// drawn here, at a named FaultSite, from the run's Choices, and traced here.
// In the spirit of FoundationDB's BUGGIFY: the sites are marked in the code
// that suffers them, switched on per run by the scenario's rates, and every
// decision comes from the one seeded source, so a seed replays.
//
// A site that fires is counted: how many faults a run injected, per site.
// Owned by one run; used on the scheduler's side or by the task holding the
// baton (never from two threads).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/scheduler.h"
#include "twice/time.h"

namespace twice::fault {

enum class FaultSite {
  kRequestLoss,       // a gateway request never reaches the merchant
  kDuplicate,         // the network sends a request again
  kDelay,             // a request arrives late (reorders notifications)
  kDuplicateDelay,    // how much later a network copy arrives than its original
  kAckLoss,           // the merchant's reply never reaches the gateway
  kQueueRedelivery,   // the queue behind the endpoint hands a message over again
  kQueueDelay,        // how long after the first hand-over it does
  kPause,             // a task stalls before its next operation (GC pause, slow I/O)
  kCrash,             // the merchant's process dies before a task's next operation
  kRestart,           // how long the process stays down after a crash
  kSecondSignal,      // the gateway sends a second success event for one payment
  kSecondSignalDelay, // how long after the first
  // An external service's own faults, at each call (rates per service):
  kServiceSlow,         // the call takes a while before the service acts
  kServiceSlowDuration, // how long
  kServiceUnavailable,  // the service fails before it applied anything
  kServiceTimeout,      // the service applies the call; the caller sees a timeout
  kServiceDuplicate,    // the request reaches the service twice
};
inline constexpr std::size_t kFaultSites = 17;

std::string_view site_name(FaultSite site);  // "request_loss", "duplicate", ...

// How often each site fires (a probability) and the range of each drawn
// duration. Built from the scenario by the run's wiring; zero switches a
// site off (and draws nothing, so a scenario without faults replays the same).
// One external service's rates for the kService* sites.
struct ServiceFaultRates {
  std::string service;
  double slow = 0.0;
  Micros slow_min = 0, slow_max = 0;
  double unavailable = 0.0;
  double timeout = 0.0;
  double duplicate = 0.0;
};

struct FaultRates {
  double request_loss = 0.0;
  double duplicate = 0.0;
  int max_copies = 1;  // at most this many extra copies per request
  Micros delay_min = 0, delay_max = 0;
  Micros duplicate_delay_min = 0, duplicate_delay_max = 0;
  double ack_loss = 0.0;
  double queue_redelivery = 0.0;
  Micros queue_delay_min = 0, queue_delay_max = 0;
  double pause = 0.0;
  Micros pause_min = 0, pause_max = 0;
  double crash = 0.0;
  Micros restart_min = 0, restart_max = 0;
  double second_signal = 0.0;
  Micros second_signal_delay_min = 0, second_signal_delay_max = 0;
  std::vector<ServiceFaultRates> services;  // by service name; a service not listed has no faults
};

class FaultPlan {
 public:
  // Takes `rates` by value: a run builds them for its plan alone, and moving
  // them in saves copying the services' list once per run.
  FaultPlan(FaultRates rates, sim::Scheduler& scheduler) : rates_(std::move(rates)), scheduler_(scheduler) {}

  // Does the fault at `site` happen now? Draws from the Choices only when the
  // site's rate is neither 0 nor 1.
  bool fires(FaultSite site);
  // A duration for `site` (a delay, a pause, a downtime) in its range.
  Micros duration(FaultSite site);
  // The same for a kService* site, at the rates of the service named `service`.
  bool fires(FaultSite site, std::string_view service);
  Micros duration(FaultSite site, std::string_view service);
  // How many extra copies the network makes of one request: `fires(kDuplicate)`
  // once per possible copy.
  int copies();
  // The trace line of a fault at `site`, for `task` (0: the gateway's side;
  // by default the task holding the baton). Built only when the trace is kept.
  template <class Text>
  void trace(FaultSite site, Text&& text, int task = -1) {
    (void)site;
    if (!scheduler_.tracing()) return;
    scheduler_.trace().add(
        sim::TraceEvent{scheduler_.now(), task < 0 ? scheduler_.current() : task, sim::TraceKind::kFault, text(), {}});
  }

  // How many times `site` fired in this run.
  int fired(FaultSite site) const { return fired_[static_cast<std::size_t>(site)]; }
  const FaultRates& rates() const { return rates_; }

 private:
  double rate(FaultSite site) const;
  const ServiceFaultRates* service_rates(std::string_view service) const;
  std::pair<Micros, Micros> range(FaultSite site) const;

  FaultRates rates_;
  sim::Scheduler& scheduler_;
  std::array<int, kFaultSites> fired_{};
};

}  // namespace twice::fault
