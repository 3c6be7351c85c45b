// WireKeys: the test keys and secrets of each gateway's wire format, which
// twice (playing the gateway) signs with and the service under test verifies
// with. They live in the --keys-dir folder the service reads: made on the
// first run, read again by later ones, so a service that loaded them at
// start keeps working across runs of twice. Test keys only: generated here,
// never a real merchant's.
//
//   stripe_webhook_secret          Stripe's endpoint secret (whsec_...)
//   adyen_hmac_key                 Adyen's HMAC key, hex (64 digits)
//   wechatpay_apiv3_key            WeChat Pay's APIv3 key (32 characters, AES-256-GCM)
//   wechatpay_serial               the platform certificate's serial (Wechatpay-Serial)
//   wechatpay_platform_public.pem  the WeChat Pay platform public key (RSA 2048)
//   alipay_public_key.pem          Alipay's public key (RSA 2048, RSA2)
//   gateway-private/*.pem          the gateway's private keys (twice's side)
//
// Immutable once loaded; EVP_PKEY signing is thread-safe, so one WireKeys is
// shared by every sending thread.
#pragma once

#include <memory>
#include <string>

#include <openssl/evp.h>

#include "twice/status.h"

namespace twice::blackbox {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

struct WireKeys {
  std::string stripe_secret;
  std::string adyen_hmac_hex;
  std::string wechat_apiv3_key;
  std::string wechat_serial;
  Pkey wechat_platform;  // private
  Pkey alipay;           // private
  // A key nobody was given: what a forger signs with.
  Pkey forger;
};

// Reads the keys in `dir`, making (and writing) those missing. An error names
// the file and why (permissions, a damaged PEM).
Status load_or_create_keys(const std::string& dir, WireKeys& out);

}  // namespace twice::blackbox
