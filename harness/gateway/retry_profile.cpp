#include "gateway/retry_profile.h"

namespace twice::gateway {
namespace {

// WeChat Pay v3 reads the status before the body: 200 or 204 is an ack even
// when the body says {"code":"FAIL"}.
bool ack_wechat_v3(const Reply& r) { return r.http_status == 200 || r.http_status == 204; }
bool ack_wechat_v2(const Reply& r) {
  return r.http_status == 200 && r.body.find("<return_code><![CDATA[SUCCESS]]></return_code>") != std::string::npos;
}
// Alipay: the body must be exactly "success", seven characters, nothing else.
bool ack_alipay(const Reply& r) { return r.http_status == 200 && r.body == "success"; }

std::vector<Micros> wechat_schedule() {
  return {15 * kSecond, 15 * kSecond, 30 * kSecond, 3 * kMinute, 10 * kMinute,
          20 * kMinute, 30 * kMinute, 30 * kMinute, 30 * kMinute, 60 * kMinute,
          3 * kHour,    3 * kHour,    3 * kHour,    6 * kHour,    6 * kHour};
}

}  // namespace

const std::vector<RetryProfile>& all_profiles() {
  static const std::vector<RetryProfile> kProfiles = {
      {"wechat-v3",
       "WeChat Pay v3: 15 retries over 24h4m; 200/204 is an ack whatever the body; 5 s timeout",
       "TRANSACTION.SUCCESS", wechat_schedule(), 5 * kSecond, ack_wechat_v3},
      {"wechat-v2",
       "WeChat Pay v2: the v3 schedule; ack is XML return_code SUCCESS; 5 s timeout",
       "TRANSACTION.SUCCESS", wechat_schedule(), 5 * kSecond, ack_wechat_v2},
      {"alipay",
       "Alipay: 8 notifications in 25h (4m, 10m, 10m, 1h, 2h, 6h, 15h); ack is a body of exactly 'success'; "
       "timeout unpublished (default 15 s)",
       "TRADE_SUCCESS",
       {4 * kMinute, 10 * kMinute, 10 * kMinute, 1 * kHour, 2 * kHour, 6 * kHour, 15 * kHour},
       15 * kSecond, ack_alipay},
  };
  return kProfiles;
}

const RetryProfile* find_profile(std::string_view name) {
  for (const auto& p : all_profiles())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace twice::gateway
