#include "fault/fault_plan.h"

namespace twice::fault {

std::string_view site_name(FaultSite site) {
  switch (site) {
    case FaultSite::kRequestLoss: return "request_loss";
    case FaultSite::kDuplicate: return "duplicate";
    case FaultSite::kDelay: return "delay";
    case FaultSite::kDuplicateDelay: return "duplicate_delay";
    case FaultSite::kAckLoss: return "ack_loss";
    case FaultSite::kQueueRedelivery: return "queue_redelivery";
    case FaultSite::kQueueDelay: return "queue_delay";
    case FaultSite::kPause: return "pause";
    case FaultSite::kCrash: return "crash";
    case FaultSite::kRestart: return "restart";
    case FaultSite::kSecondSignal: return "second_signal";
    case FaultSite::kSecondSignalDelay: return "second_signal_delay";
    case FaultSite::kServiceSlow: return "service_slow";
    case FaultSite::kServiceSlowDuration: return "service_slow_duration";
    case FaultSite::kServiceUnavailable: return "service_unavailable";
    case FaultSite::kServiceTimeout: return "service_timeout";
    case FaultSite::kServiceDuplicate: return "service_duplicate";
  }
  return "?";
}

double FaultPlan::rate(FaultSite site) const {
  switch (site) {
    case FaultSite::kRequestLoss: return rates_.request_loss;
    case FaultSite::kDuplicate: return rates_.duplicate;
    case FaultSite::kAckLoss: return rates_.ack_loss;
    case FaultSite::kQueueRedelivery: return rates_.queue_redelivery;
    case FaultSite::kPause: return rates_.pause;
    case FaultSite::kCrash: return rates_.crash;
    case FaultSite::kSecondSignal: return rates_.second_signal;
    default: return 0.0;  // a duration site: it does not fire on its own
  }
}

std::pair<Micros, Micros> FaultPlan::range(FaultSite site) const {
  switch (site) {
    case FaultSite::kDelay: return {rates_.delay_min, rates_.delay_max};
    case FaultSite::kDuplicateDelay: return {rates_.duplicate_delay_min, rates_.duplicate_delay_max};
    case FaultSite::kQueueDelay: return {rates_.queue_delay_min, rates_.queue_delay_max};
    case FaultSite::kPause: return {rates_.pause_min, rates_.pause_max};
    case FaultSite::kRestart: return {rates_.restart_min, rates_.restart_max};
    case FaultSite::kSecondSignalDelay: return {rates_.second_signal_delay_min, rates_.second_signal_delay_max};
    default: return {0, 0};
  }
}

bool FaultPlan::fires(FaultSite site) {
  if (!scheduler_.choices().chance(rate(site))) return false;
  ++fired_[static_cast<std::size_t>(site)];
  return true;
}

Micros FaultPlan::duration(FaultSite site) {
  const auto [lo, hi] = range(site);
  // A delivery's network delay is drawn for every delivery, not after a
  // fault: the exhaustive search takes it at the run's tempo, as a step's
  // latency (Choices::tempo, docs/architecture.md).
  if (site == FaultSite::kDelay) return scheduler_.choices().between(lo, hi);
  return scheduler_.choices().fault_duration(lo, hi);
}

const ServiceFaultRates* FaultPlan::service_rates(std::string_view service) const {
  for (const auto& r : rates_.services)
    if (r.service == service) return &r;
  return nullptr;
}

bool FaultPlan::fires(FaultSite site, std::string_view service) {
  const ServiceFaultRates* r = service_rates(service);
  if (!r) return false;
  double p = 0.0;
  switch (site) {
    case FaultSite::kServiceSlow: p = r->slow; break;
    case FaultSite::kServiceUnavailable: p = r->unavailable; break;
    case FaultSite::kServiceTimeout: p = r->timeout; break;
    case FaultSite::kServiceDuplicate: p = r->duplicate; break;
    default: return false;  // not a service's site
  }
  if (!scheduler_.choices().chance(p)) return false;
  ++fired_[static_cast<std::size_t>(site)];
  return true;
}

Micros FaultPlan::duration(FaultSite site, std::string_view service) {
  const ServiceFaultRates* r = service_rates(service);
  if (!r || site != FaultSite::kServiceSlowDuration) return 0;
  return scheduler_.choices().fault_duration(r->slow_min, r->slow_max);
}

int FaultPlan::copies() {
  int extra = 0;
  for (int c = 0; c < rates_.max_copies; ++c)
    if (fires(FaultSite::kDuplicate)) ++extra;
  return extra;
}

}  // namespace twice::fault
