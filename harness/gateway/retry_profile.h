// RetryProfile: how one gateway delivers a notification: when it retries a
// delivery that was not acknowledged, how long it waits for an answer, what
// counts as an acknowledgement, and whether later notifications wait behind a
// failing one (Adyen's head-of-line queue). Figures from each gateway's published notify documentation;
// the ones a gateway does not publish are defaults, said so in `description`
// and marked below, and a scenario's [gateway] table sets them (profile_of()
// in gateway/scenario_profile.h gives the profile a run plays).
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
  std::string second_paid_event_type;  // a second success event for the same payment; empty: the gateway sends none
  std::string refunded_event_type;     // the payment went back to the payer
  std::string closed_event_type;       // an unpaid trade closed; empty: the gateway sends none
  std::vector<Micros> retry_after;     // delay before retry i (after attempt i+1 failed)
  Micros timeout = 5 * kSecond;        // no answer by then: the attempt failed
  // Why `reply` is not an ack: nullptr when it is one; "" when its status
  // alone refuses it (the status says why); else what the gateway wanted of
  // an accepted status ("the body is not exactly \"success\""), for the trace.
  const char* (*refusal)(const Reply&) = nullptr;
  bool head_of_line = false;           // one notification in flight at a time, in order
  // A signed timestamp further than this from now is refused (Env::verify):
  // Stripe's t= and WeChat Pay v3's Wechatpay-Timestamp, 5 minutes. 0: the
  // gateway's scheme signs no time (Alipay, Adyen, WeChat v2), or PayPal's,
  // which signs its transmission time but publishes no tolerance.
  Micros signature_tolerance = 0;
  // Whether the gateway publishes its timeout and its retry intervals
  // (/work/shared/GATEWAYS.md); false: the figure above is the model's
  // default, a parameter a scenario's [gateway] sets, and `twice list` says so.
  bool timeout_published = true;
  bool retry_after_published = true;

  bool is_ack(const Reply& reply) const { return refusal(reply) == nullptr; }
};

const RetryProfile* find_profile(std::string_view name);
const std::vector<RetryProfile>& all_profiles();

}  // namespace twice::gateway
