// Signature: Stripe-style webhook signatures, "t=<unix seconds>,v1=<hex>"
// where v1 is HMAC-SHA256(secret, "<t>.<raw body>") (OpenSSL), the form every
// simulated notify carries (Notify::signature). Verification compares in
// constant time and, where the gateway's own scheme signs a timestamp with a
// tolerance (Stripe, WeChat Pay v3: RetryProfile::signature_tolerance),
// rejects one outside it, so a captured message replayed later is refused.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "twice/status.h"
#include "twice/time.h"
#include "twice/wire.h"

namespace twice::gateway {

// Virtual time 0 is this Unix time (2026-01-01T00:00:00Z) in signatures.
inline constexpr std::int64_t kEpochSeconds = kWireEpochSeconds;
inline constexpr Micros kSignatureTolerance = 5 * kMinute;

std::string hmac_sha256_hex(std::string_view key, std::string_view message);
std::string sign(std::string_view secret, std::int64_t unix_seconds, std::string_view payload);
// OK, or why not: a malformed header, a bad signature, a timestamp more than
// `tolerance` from `now` (0: no time check, for a gateway whose scheme signs
// no timestamp or publishes no tolerance).
Status verify(std::string_view secret, std::string_view header, std::string_view payload, Micros now,
              Micros tolerance = kSignatureTolerance);

}  // namespace twice::gateway
