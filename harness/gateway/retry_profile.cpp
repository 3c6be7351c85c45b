#include "gateway/retry_profile.h"

#include <optional>

#include "gateway/xml_text.h"

namespace twice::gateway {
namespace {

const char* ack_2xx(const Reply& r) { return r.http_status >= 200 && r.http_status < 300 ? nullptr : ""; }
// WeChat Pay v3 reads the status before the body: 200 or 204 is an ack even
// when the body says {"code":"FAIL"}.
const char* ack_wechat_v3(const Reply& r) { return r.http_status == 200 || r.http_status == 204 ? nullptr : ""; }
// WeChat Pay v2 parses the body as XML and reads <return_code>: its text,
// plain or in CDATA, with the whitespace around it an XML reader drops.
const char* ack_wechat_v2(const Reply& r) {
  if (r.http_status != 200) return "";
  const std::optional<std::string> code = xml_child_text(r.body, "return_code");
  if (!code) return "the body is not XML with a <return_code> element";
  return *code == "SUCCESS" ? nullptr : "<return_code> is not SUCCESS";
}
// Alipay: the body must be exactly "success", seven characters, nothing else.
const char* ack_alipay(const Reply& r) {
  if (r.http_status != 200) return "";
  return r.body == "success" ? nullptr : "the body is not exactly \"success\"";
}
// Adyen takes a webhook as delivered by its HTTP status, 200 or 202; the
// older "[accepted]" body came with a 200 and is no ack on its own.
const char* ack_adyen(const Reply& r) { return r.http_status == 200 || r.http_status == 202 ? nullptr : ""; }

std::vector<Micros> wechat_schedule() {
  return {15 * kSecond, 15 * kSecond, 30 * kSecond, 3 * kMinute, 10 * kMinute,
          20 * kMinute, 30 * kMinute, 30 * kMinute, 30 * kMinute, 60 * kMinute,
          3 * kHour,    3 * kHour,    3 * kHour,    6 * kHour,    6 * kHour};
}

// Stripe: "exponential backoff up to 3 days", intervals unpublished. Default:
// doubling from 1 minute, capped at 12 hours, until 3 days have passed.
std::vector<Micros> stripe_schedule() {
  std::vector<Micros> out;
  Micros total = 0, gap = kMinute;
  while (total + gap <= 72 * kHour) {
    out.push_back(gap);
    total += gap;
    gap = std::min(gap * 2, 12 * kHour);
  }
  return out;
}

// PayPal: "up to 25 retries over 3 days", spacing unpublished. Default: 25
// gaps growing linearly so that they add up to 3 days.
std::vector<Micros> paypal_schedule() {
  std::vector<Micros> out;
  const Micros unit = 72 * kHour / (25 * 26 / 2);
  for (int i = 1; i <= 25; ++i) out.push_back(unit * i);
  return out;
}

// Adyen: 3 quick retries, then the endpoint's queue: 2m, 5m, 10m, 15m, 30m,
// 1h, 2h, 4h, 8h, then every 8h until 30 days.
std::vector<Micros> adyen_schedule() {
  std::vector<Micros> out = {9 * kSecond, 18 * kSecond, 27 * kSecond, 2 * kMinute, 5 * kMinute, 10 * kMinute,
                             15 * kMinute, 30 * kMinute, kHour, 2 * kHour, 4 * kHour, 8 * kHour};
  Micros total = 0;
  for (Micros m : out) total += m;
  while (total + 8 * kHour <= 30 * 24 * kHour) {
    out.push_back(8 * kHour);
    total += 8 * kHour;
  }
  return out;
}

// Marks the figures a gateway does not publish: Alipay's, Stripe's and
// PayPal's timeouts, Stripe's intervals ("exponential backoff"), PayPal's
// spacing of its 25 retries. Their figures above are the model's defaults.
std::vector<RetryProfile> with_unpublished_figures(std::vector<RetryProfile> profiles) {
  for (RetryProfile& p : profiles) {
    p.timeout_published = p.name != "alipay" && p.name != "stripe" && p.name != "paypal";
    p.retry_after_published = p.name != "stripe" && p.name != "paypal";
  }
  return profiles;
}

}  // namespace

const std::vector<RetryProfile>& all_profiles() {
  static const std::vector<RetryProfile> kProfiles = with_unpublished_figures({
      {"wechat-v3", "WeChat Pay v3: 15 retries over 24h4m; 200/204 is an ack whatever the body; 5 s timeout",
       "TRANSACTION.SUCCESS", "", "REFUND.SUCCESS", "", wechat_schedule(), 5 * kSecond, ack_wechat_v3, false,
       5 * kMinute},
      {"wechat-v2", "WeChat Pay v2: the v3 schedule; ack is XML return_code SUCCESS; 5 s timeout",
       "TRANSACTION.SUCCESS", "", "REFUND.SUCCESS", "", wechat_schedule(), 5 * kSecond, ack_wechat_v2, false},
      {"alipay",
       "Alipay: 8 notifications in 25h (4m, 10m, 10m, 1h, 2h, 6h, 15h); ack is a body of exactly 'success'; "
       "timeout unpublished (default 15s)",
       "TRADE_SUCCESS", "TRADE_FINISHED", "TRADE_CLOSED", "TRADE_CLOSED",
       {4 * kMinute, 10 * kMinute, 10 * kMinute, 1 * kHour, 2 * kHour, 6 * kHour, 15 * kHour}, 15 * kSecond,
       ack_alipay, false},
      {"stripe",
       "Stripe: exponential backoff up to 3 days (default: doubling from 1m, capped at 12h); any 2xx; "
       "timeout unpublished (default 15s)",
       "payment_intent.succeeded", "charge.succeeded", "charge.refunded", "payment_intent.canceled", stripe_schedule(), 15 * kSecond, ack_2xx, false, 5 * kMinute},
      {"paypal",
       "PayPal: up to 25 retries over 3 days (default: linearly growing gaps); any 2xx; timeout default 15s",
       "PAYMENT.CAPTURE.COMPLETED", "", "PAYMENT.CAPTURE.REFUNDED", "", paypal_schedule(), 15 * kSecond, ack_2xx, false},
      {"adyen",
       "Adyen: 9s, 18s, 27s, then 2m..8h and every 8h for 30 days; 200/202 (whatever the body); 10 s timeout; "
       "head-of-line: later notifications wait behind a failing one",
       "AUTHORISATION", "", "REFUND", "OFFER_CLOSED", adyen_schedule(), 10 * kSecond, ack_adyen, true},
  });
  return kProfiles;
}

}  // namespace twice::gateway

namespace twice {

// Read off the profiles' own event types, so that a new profile is classified
// by writing it down once.
EventKind event_kind(const Notify& n) {
  // Alipay's TRADE_CLOSED names both a close and a full refund: the refund amount tells.
  if (n.refund_amount > 0) return EventKind::kRefunded;
  if (n.event_type.empty()) return EventKind::kOther;  // profiles without a close event leave theirs empty
  for (const auto& p : gateway::all_profiles())
    if (n.event_type == p.closed_event_type) return EventKind::kClosed;
  for (const auto& p : gateway::all_profiles())
    if (n.event_type == p.refunded_event_type) return EventKind::kRefunded;
  for (const auto& p : gateway::all_profiles())
    if (n.event_type == p.paid_event_type || n.event_type == p.second_paid_event_type) return EventKind::kPaid;
  return EventKind::kOther;
}

}  // namespace twice

namespace twice::gateway {

const RetryProfile* find_profile(std::string_view name) {
  for (const auto& p : all_profiles())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace twice::gateway
