#include "net/network.h"

#include <fmt/format.h>

namespace twice::net {

using endpoint::Delivery;
using endpoint::DeliveryKind;
using fault::FaultSite;

int Network::send(gateway::Request request) {
  const int copies = 1 + faults_.copies();
  int delivered = 0;
  for (int copy = 0; copy < copies; ++copy) {
    const bool original = copy == 0;
    if (faults_.fires(FaultSite::kRequestLoss)) {
      faults_.trace(FaultSite::kRequestLoss, [&] {
        return fmt::format("{}{} is lost on the way to the merchant", request.what, original ? "" : " (network copy)");
      });
      continue;
    }
    Micros delay = faults_.duration(FaultSite::kDelay);
    if (!original) delay += faults_.duration(FaultSite::kDuplicateDelay);
    // Only the gateway's own request can carry a reply back: the network's
    // copies are answered into the void.
    // The last copy takes the notify over; the others copy it (a delivery owns its notify).
    const int task = merchant_.accept(Delivery{copy + 1 == copies ? std::move(request.notify) : request.notify,
                                               request.task_name + (original ? "" : " (network copy)"),
                                               scheduler_.now() + delay,
                                               original ? DeliveryKind::kGateway : DeliveryKind::kNetworkCopy,
                                               original ? request.id : endpoint::kNoRequest,
                                               {}});
    ++delivered;
    if (original) {
      if (scheduler_.tracing())
        scheduler_.record(sim::TraceKind::kGateway,
                          fmt::format("sends {} as {}{}", request.what, sim::task_label(task),
                                      delay ? ", arriving in " + format_duration(delay) : ""));
    } else {
      faults_.trace(FaultSite::kDuplicate, [&] {
        return fmt::format("network duplicates {}: {} arrives in {}", request.what, sim::task_label(task),
                           format_duration(delay));
      });
    }
  }
  return delivered;
}

void Network::inject(const Notify& notify, std::string task_name, std::string invalid_reason) {
  const DeliveryKind kind = invalid_reason.empty() ? DeliveryKind::kReplay : DeliveryKind::kInvalid;
  merchant_.accept(Delivery{notify, std::move(task_name), scheduler_.now(), kind, endpoint::kNoRequest,
                            std::move(invalid_reason)});
}

bool Network::reply_arrives(const std::function<std::string()>& what) {
  if (!faults_.fires(FaultSite::kAckLoss)) return true;
  faults_.trace(FaultSite::kAckLoss, [&] { return fmt::format("the reply to {} is lost on the way back", what()); });
  return false;
}

}  // namespace twice::net
