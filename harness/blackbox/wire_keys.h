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
//   paypal_cert.pem                PayPal's webhook-signing certificate (self-signed X.509,
//                                  RSA 2048), also served at PAYPAL-CERT-URL
//   paypal_webhook_id              the webhook's id, part of what PayPal signs
//   gateway-private/*.pem          the gateway's private keys (twice's side)
//
// WireKeys itself is gateway/wire_format.h's: simulation signs with the same
// struct (fixed test keys, gateway/simulated_keys.h).
#pragma once

#include <string>

#include "gateway/wire_format.h"
#include "twice/status.h"

namespace twice::blackbox {

using gateway::Pkey;
using gateway::WireKeys;

// Reads the keys in `dir`, making (and writing) those missing. An error names
// the file and why (permissions, a damaged PEM).
Status load_or_create_keys(const std::string& dir, WireKeys& out);

}  // namespace twice::blackbox
