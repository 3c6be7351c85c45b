// Wire formats: a gateway's notify as the HTTP request that gateway really
// sends, so the service's own SDK code parses and verifies it.
//   wechat-v3  JSON event; `resource` is the transaction JSON under
//              AEAD_AES_256_GCM with the APIv3 key; Wechatpay-Timestamp,
//              -Nonce, -Serial and -Signature = base64 RSA-SHA256 (PKCS#1
//              v1.5) of "timestamp\nnonce\nbody\n" with the platform key.
//   alipay     form-encoded parameters, total_amount in yuan; sign = base64
//              RSA-SHA256 over the sorted "k=v&..." of every parameter but
//              sign and sign_type (RSA2).
//   stripe     JSON event; Stripe-Signature: t=<unix>,v1=hex HMAC-SHA256 of
//              "<t>.<body>" with the endpoint secret. payment_intent.* events
//              carry the PaymentIntent (id pi_<transaction>), charge.* the
//              Charge (id ch_<transaction>, payment_intent: its pi_ id).
//   adyen      JSON with notificationItems; additionalData.hmacSignature =
//              base64 HMAC-SHA256 (hex key) of pspReference:originalReference:
//              merchantAccountCode:merchantReference:value:currency:eventCode:success.
//   paypal     JSON webhook event (resource: the capture or refund, amount
//              in major units, custom_id = the order number);
//              PAYPAL-TRANSMISSION-ID/-TIME/-SIG/-CERT-URL/-AUTH-ALGO, SIG =
//              base64 SHA256withRSA of "<id>|<time>|<webhook id>|<crc32 of
//              the body, decimal>", checked with the X.509 certificate at
//              CERT-URL (black-box mode serves it, and the
//              verify-webhook-signature API, from its query server).
// A forged notify is the same request signed with a key the service was
// never given. Black-box mode sends these requests over HTTP; simulation
// hands them to a handler through twice::wire() (Gateway::wire), so a
// handler's parsing and verification are exercised in both modes.
// Pure functions over immutable keys; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <openssl/evp.h>

#include "twice/notify.h"
#include "twice/status_or.h"
#include "twice/wire.h"

namespace twice::gateway {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

// The gateway's side of the keys: what it signs with. Immutable once made;
// EVP_PKEY signing is thread-safe, so one WireKeys is shared by every
// sending thread.
struct WireKeys {
  std::string stripe_secret;
  std::string adyen_hmac_hex;
  std::string wechat_apiv3_key;
  std::string wechat_serial;
  Pkey wechat_platform;  // private
  Pkey alipay;           // private
  Pkey paypal;           // private; its certificate is paypal_cert_pem
  std::string paypal_cert_pem;    // self-signed X.509 of the paypal key
  std::string paypal_cert_url;    // where the service fetches it (PAYPAL-CERT-URL)
  std::string paypal_webhook_id;  // the webhook's id, part of what is signed
  // A key nobody was given: what a forger signs with.
  Pkey forger;
};

// The profiles encode() knows: wechat-v3, alipay, stripe, adyen, paypal.
bool has_wire_format(std::string_view profile);
const char* wire_formats();  // "wechat-v3, alipay, stripe, adyen, paypal", for messages

// The times a request carries, as Unix seconds. `sent` is when this request
// goes out: the signature's time (Wechatpay-Timestamp, Stripe's t=,
// PAYPAL-TRANSMISSION-TIME) and Alipay's notify_time, new on every resend.
// `event` is when what it reports happened and the notification was made
// (WeChat create_time and a refund's success_time, Stripe's created, Adyen's
// eventDate, Alipay's gmt_refund, PayPal's create_time); `paid` is when the
// payment settled (WeChat success_time, Alipay gmt_payment, the PayPal
// capture's create_time). Both stay the same on every resend of one
// notification, as the gateway's own records do.
struct WireTimes {
  std::int64_t sent = 0;
  std::int64_t event = 0;
  std::int64_t paid = 0;
};

// `n` as `profile` sends it at `times`. `nonce` (32 letters or digits) makes
// each request's WeChat nonces; `forged` signs with WireKeys::forger. An
// error for a profile without a wire format.
StatusOr<WireRequest> encode(const Notify& n, std::string_view profile, const WireKeys& keys, const WireTimes& times,
                             std::string_view nonce, bool forged);
// The same, everything stamped `unix_seconds`: a notification sent when its
// payment settled.
StatusOr<WireRequest> encode(const Notify& n, std::string_view profile, const WireKeys& keys,
                             std::int64_t unix_seconds, std::string_view nonce, bool forged);

// Helpers the tests check against known answers.
std::string base64(std::string_view bytes);
std::string hmac_sha256(std::string_view key, std::string_view message);  // raw 32 bytes
// base64 of the RSA-SHA256 (PKCS#1 v1.5) signature of `message`.
std::string rsa_sha256_base64(EVP_PKEY* key, std::string_view message);
// Whether `signature_base64` is `key`'s RSA-SHA256 signature of `message`.
bool rsa_sha256_verify(EVP_PKEY* key, std::string_view message, std::string_view signature_base64);
// The key's public half as PEM (SubjectPublicKeyInfo), as a merchant is given it.
std::string public_pem(EVP_PKEY* key);
// CRC-32 (IEEE 802.3, as zlib's crc32()) of `bytes`: PayPal signs it in decimal.
std::uint32_t crc32(std::string_view bytes);
// What a PayPal webhook's PAYPAL-TRANSMISSION-SIG signs.
std::string paypal_signed_text(std::string_view transmission_id, std::string_view transmission_time,
                               std::string_view webhook_id, std::string_view body);
// "12000" fen -> "120.00" yuan (Alipay's amounts).
std::string yuan(std::int64_t fen);
// application/x-www-form-urlencoded, UTF-8 bytes kept, space as %20.
std::string form_escape(std::string_view s);

}  // namespace twice::gateway
