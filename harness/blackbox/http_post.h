// One HTTP request to the service under test, as a gateway sends it: a new
// connection each time (gateways do not keep a merchant's connection open),
// answered, refused, or cut at the timeout. Wraps cpp-httplib's client
// (Debian's libcpp-httplib-dev). Thread-safe: each call has its own client.
#pragma once

#include <string>

#include "blackbox/loopback.h"
#include "blackbox/wire_format.h"
#include "twice/time.h"

namespace twice::blackbox {

struct HttpOutcome {
  enum class Kind { kAnswered, kRefused, kTimedOut, kFailed };
  Kind kind = Kind::kFailed;
  int http_status = 0;
  std::string body;
  std::string error;  // why it was not answered, in cpp-httplib's words
};

// POSTs `request` to the endpoint; waits at most `timeout` for the answer.
HttpOutcome post(const HttpEndpoint& to, const WireRequest& request, Micros timeout);

// Asks the endpoint for OPTIONS (no side effect a notify route has), to tell
// "nothing listens" and "never answers" from a service that is up.
HttpOutcome probe(const HttpEndpoint& to, Micros timeout);

}  // namespace twice::blackbox
