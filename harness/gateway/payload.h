// Payload: the JSON body the simulated gateway posts for a notify, and a
// per-thread cache of the bodies built.
//
// Why a cache: the body is a pure function of seven fields of the Notify (id,
// event type, order, transaction, amount, currency, refund), and runs of one
// cell build the same few bodies again and again; building one with
// nlohmann::json cost 7% of a schedule of unique-key+cas x
// concurrent-duplicates (issue #12). A hit compares the fields and copies
// the stored text, byte for byte what payload_of() returns. It is kept by
// event id, not as the last 16 bodies: a run of more orders than that
// (BM_Growth/burst/128 sends 2,048 requests for 128) missed on every send
// and built each body again, 16% of its instructions.
// Threads: payload_of() is pure; cached_payload()'s cache is thread_local.
#pragma once

#include <string>

#include "twice/notify.h"

namespace twice::gateway {

// The body a real gateway would post for `n`; n.raw_payload and n.signature
// are not read.
std::string payload_of(const Notify& n);
// payload_of(n), from this thread's cache (up to 4,096 event ids).
std::string cached_payload(const Notify& n);

}  // namespace twice::gateway
