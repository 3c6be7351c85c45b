// One HTTP/1.1 request to the service under test, as a gateway sends it: a
// new connection each time (gateways do not keep a merchant's connection
// open, so `Connection: close`), and one deadline for the whole exchange
// (connect, send, every byte of the answer), not one per read: a service that
// trickles its answer a byte at a time is cut at the deadline like one that
// says nothing. An answer's body is read up to kMaxAnswerBody; a longer one is
// a broken answer, never buffered whole.
//
// Its own small client on POSIX sockets rather than cpp-httplib's, for two
// things that client cannot do: tell a fast broken answer (bytes that are not
// HTTP, a reset, a body cut short) from a timeout, and keep the connection of
// a request the gateway gave up on open (OpenRequest), so that twice can wait
// until the service is done with it before reading the database.
// Thread-safe: each call has its own socket.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "blackbox/loopback.h"
#include "process/stop_now.h"
#include "twice/time.h"
#include "twice/wire.h"

namespace twice::blackbox {

// How often a wait of a black-box run (a request here, a sleep or an
// attempt's wait in blackbox_run.cpp) looks whether it was stopped now.
inline constexpr Micros kStopCheck = 20 * kMillisecond;

// Bytes of an answer's body twice reads; past them the answer is broken.
inline constexpr std::size_t kMaxAnswerBody = 1 << 20;

struct HttpOutcome {
  enum class Kind {
    kAnswered,  // a complete HTTP answer (any status)
    kRefused,   // connection refused: nothing listens
    kTimedOut,  // no complete answer by the deadline
    kBroken,    // an answer that is not HTTP, a reset, a connection closed before the answer was whole, a body over kMaxAnswerBody
  };
  Kind kind = Kind::kBroken;
  int http_status = 0;
  std::string body;
  std::string error;  // why it was not answered, one line ("connection reset by the service")
  bool sent = false;  // the whole request reached the service's socket
};

// A request twice gave up on at its deadline, its connection still open: the
// service may still be working on it. Closes the connection when destroyed.
class OpenRequest {
 public:
  OpenRequest();
  ~OpenRequest();
  OpenRequest(OpenRequest&&) noexcept;
  OpenRequest& operator=(OpenRequest&&) noexcept;
  // Holds a connection (post() timed out after connecting).
  bool holds_connection() const;
  struct State;

 private:
  friend HttpOutcome post(const HttpEndpoint&, const WireRequest&, Micros, OpenRequest*, const process::StopNow*);
  friend int wait_until_ended(std::vector<OpenRequest>&, Micros);
  std::unique_ptr<State> state_;
};

// POSTs `request` to the endpoint; the whole exchange must end within
// `timeout`. When it does not and `gave_up` is given, the connection is
// handed over to it open instead of being closed. Once `stop` is stopped (a
// second Ctrl-C) the exchange ends within kStopCheck, timed out, its
// connection closed.
HttpOutcome post(const HttpEndpoint& to, const WireRequest& request, Micros timeout, OpenRequest* gave_up = nullptr,
                 const process::StopNow* stop = nullptr);

// Asks the endpoint for OPTIONS (no side effect a notify route has), to tell
// "nothing listens" and "never answers" from a service that is up.
HttpOutcome probe(const HttpEndpoint& to, Micros timeout);

// Waits until the service has ended each open request (answered it, or
// closed or reset its connection), at most `bound`. Returns how many it had
// not ended by then; those stay open in `open`, the ended ones are removed.
int wait_until_ended(std::vector<OpenRequest>& open, Micros bound);

}  // namespace twice::blackbox
