// Delivery: one request that reaches the merchant's endpoint, as the network
// hands it over: the notify, when it arrives, why it arrives (the gateway's
// own request, a copy the network made, the queue handing it over again, an
// attacker's), and which gateway request its reply answers.
// Plain data.
#pragma once

#include <string>

#include "twice/notify.h"
#include "twice/time.h"

namespace twice::endpoint {

// Why a delivery reaches the handler: the checker treats invalid ones apart,
// and only the gateway's own request can carry a reply back. kReplay: an
// attacker's copy of a genuine request that is still valid, judged as a
// duplicate.
enum class DeliveryKind { kGateway, kNetworkCopy, kQueueRedelivery, kInvalid, kReplay };

// The gateway's request a reply answers; kNoRequest: nobody waits for it.
using RequestId = int;
inline constexpr RequestId kNoRequest = -1;

struct Delivery {
  Notify notify;
  std::string task_name;  // "notify O-1 #2 (network copy)"
  Micros at = 0;          // when it arrives
  DeliveryKind kind = DeliveryKind::kGateway;
  RequestId request = kNoRequest;
  std::string invalid_reason;  // kInvalid: what is wrong with it
};

// A task the endpoint ran, for the transcript's column headers.
struct TaskInfo {
  std::string name;      // "notify O-1 #2 (network copy)"
  std::string order_no;  // the order the delivery concerns; empty for a job
};

}  // namespace twice::endpoint
