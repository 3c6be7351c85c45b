// The wire form of a notify: the HTTP request its gateway really sends (WeChat
// Pay v3's JSON with the AES-256-GCM `resource` and Wechatpay-* headers,
// Alipay's RSA2-signed form, Stripe's Stripe-Signature, Adyen's
// hmacSignature, PayPal's PAYPAL-TRANSMISSION-SIG), and the keys the gateway gave the merchant to check it.
// A handler asks twice::wire(notify, env) for it and parses and verifies it
// as its production code does, with the same SDK logic black-box mode
// exercises (`twice run --endpoint`, docs/black-box.md), which builds these
// requests with the same code. The values are plain; safe to copy between
// threads. wire() and wire_secrets() belong to the task that holds `env`.
//
// No API version change (twice/version.h): Env is untouched. An Env that
// serves a gateway is also a WireSource, and wire() asks for that with
// dynamic_cast, so a plugin built against this header and loaded by a twice
// without it gets an error Status, never a call through a missing vtable slot.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "twice/env.h"
#include "twice/notify.h"
#include "twice/status_or.h"

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
  std::string paypal_cert_pem;    // the X.509 certificate PAYPAL-CERT-URL names (in simulation, nothing serves it)
  std::string paypal_webhook_id;  // the webhook's id, part of what PAYPAL-TRANSMISSION-SIG signs
};

// What an Env that serves a gateway's notifies is besides (the simulator's
// task Env). Handlers call the free functions below, not this.
class __attribute__((visibility("default"))) WireSource {
 public:
  virtual ~WireSource() = default;
  virtual StatusOr<WireRequest> wire(const Notify& notify) = 0;
  virtual const WireSecrets& wire_secrets() = 0;
};

// The notify as its gateway really sends it over HTTP: the body and headers
// a WeChat Pay v3, Alipay, Stripe, Adyen or PayPal SDK parses and verifies
// with wire_secrets(). A forged notify comes signed with a key the merchant
// was never given, a replayed one as the bytes first sent, old timestamp and
// all. Built on first ask
// (an RSA signature costs about a millisecond) from the run's own values:
// the same run gives the same bytes. Not a scheduling point. An error when
// the notify's gateway has no wire format (wechat-v2), or `env` serves no
// gateway (a background job, `twice stress`, a test's own Env).
inline StatusOr<WireRequest> wire(const Notify& notify, Env& env) {
  if (auto* source = dynamic_cast<WireSource*>(&env)) return source->wire(notify);
  return Status::error("notify " + notify.event_id + ": this Env serves no gateway, so there is no wire form");
}

// The keys that verify and decrypt wire(): fixed test keys in simulation;
// all empty for an Env that serves no gateway.
inline const WireSecrets& wire_secrets(Env& env) {
  if (auto* source = dynamic_cast<WireSource*>(&env)) return source->wire_secrets();
  static const WireSecrets none;
  return none;
}

}  // namespace twice
