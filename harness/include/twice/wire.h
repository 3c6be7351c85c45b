// The wire form of a notify: the HTTP request its gateway really sends (WeChat
// Pay v3's JSON with the AES-256-GCM `resource` and Wechatpay-* headers,
// Alipay's RSA2-signed form, Stripe's Stripe-Signature, Adyen's
// hmacSignature), and the keys the gateway gave the merchant to check it.
// A handler asks Env::wire() for it and parses and verifies it as its
// production code does, with the same SDK logic black-box mode exercises
// (`twice run --endpoint`, docs/black-box.md), which builds these requests
// with the same code. Plain values; safe to copy between threads.
// Added in API version 5.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace twice {

// Virtual time 0 as a Unix time (2026-01-01T00:00:00Z): the clock of every
// timestamp on the wire (Wechatpay-Timestamp, Stripe's t=, notify_time).
// A handler compares them with kWireEpochSeconds + env.clock().now() / kSecond.
inline constexpr std::int64_t kWireEpochSeconds = 1767225600;

struct WireRequest {
  std::string content_type;  // "application/json", "application/x-www-form-urlencoded; charset=utf-8"
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type, in the order sent
  std::string body;                                          // the exact bytes the signature covers

  // The value of header `name`, compared without case as HTTP does; empty
  // when the request has none.
  std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k.size() != name.size()) continue;
      bool same = true;
      for (std::size_t i = 0; i < k.size() && same; ++i)
        same = std::tolower(static_cast<unsigned char>(k[i])) == std::tolower(static_cast<unsigned char>(name[i]));
      if (same) return v;
    }
    return {};
  }
};

// What the gateway gave the merchant, as a real merchant finds it in its
// gateway dashboard (black-box mode writes the same names as files in
// --keys-dir). Test keys, fixed in simulation so that a run's requests are a
// function of its seed; never a real merchant's.
struct WireSecrets {
  std::string wechat_apiv3_key;            // 32 characters: the AES-256-GCM key of WeChat Pay v3's resource
  std::string wechat_serial;               // the platform certificate's serial, sent as Wechatpay-Serial
  std::string wechat_platform_public_pem;  // verifies Wechatpay-Signature (RSA-SHA256, PKCS#1 v1.5)
  std::string alipay_public_pem;           // verifies Alipay's `sign` (RSA2)
  std::string stripe_secret;               // the endpoint secret of Stripe-Signature's HMAC-SHA256
  std::string adyen_hmac_hex;              // Adyen's HMAC key, 64 hex digits
};

}  // namespace twice
