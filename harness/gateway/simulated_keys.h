// The gateway's keys in simulation: fixed RSA 2048 test keys and secrets,
// so that twice::wire()'s requests are the same bytes on every replay of a
// run. Black-box mode makes its own per --keys-dir (blackbox/wire_keys.h).
// Parsed once, on first use; immutable after; safe from any thread.
#pragma once

#include "gateway/wire_format.h"
#include "twice/wire.h"

namespace twice::gateway {

// What the simulated gateway signs with (WireKeys::forger: what its attacker signs with).
const WireKeys& simulated_wire_keys();
// Their public halves and the shared secrets: what the merchant was given.
const WireSecrets& simulated_wire_secrets();

}  // namespace twice::gateway
