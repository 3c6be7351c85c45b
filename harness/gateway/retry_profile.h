// RetryProfile: how one gateway delivers a notification: when it retries a
// delivery that was not acknowledged, how long it waits for an answer, what
// counts as an acknowledgement, and whether later notifications wait behind a
// failing one (Adyen's head-of-line queue). Figures from each gateway's published notify documentation;
// the ones a gateway does not publish are defaults, said so in `description`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "twice/notify.h"
#include "twice/time.h"

namespace twice::gateway {

struct RetryProfile {
  std::string name;
  std::string description;
  std::string paid_event_type;         // the event type of a "payment succeeded" notify
  std::string second_paid_event_type;  // a second success signal for the same payment
  std::string refunded_event_type;     // the payment went back to the payer
  std::string closed_event_type;       // an unpaid trade closed; empty: the gateway sends none
  std::vector<Micros> retry_after;     // delay before retry i (after attempt i+1 failed)
  Micros timeout = 5 * kSecond;        // no answer by then: the attempt failed
  bool (*is_ack)(const Reply&) = nullptr;
  bool head_of_line = false;           // one notification in flight at a time, in order
};

const RetryProfile* find_profile(std::string_view name);
const std::vector<RetryProfile>& all_profiles();

}  // namespace twice::gateway
