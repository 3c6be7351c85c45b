// Handler: a payment-callback handler under test, plain synchronous C++.
//
// A handler is constructed once per run and its handle() is called once per
// delivery, possibly for several deliveries interleaved on the scheduler (each
// in its own task, one at a time). Keep per-delivery state on the stack; state
// in members is shared by concurrent deliveries, as it would be in a server.
// A handler that throws answers HTTP 500, as a web framework would.
//
// Register a handler with one line in its own .cpp file:
//   TWICE_REGISTER_HANDLER(CasHandler, "cas", "UPDATE ... WHERE status='WAIT_PAY'");
// The same line works in a test executable and in a plugin that `twice run
// --plugin` loads: registration goes through twice_register_handler(), a C
// entry point that checks TWICE_API_VERSION before it touches anything else.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "twice/env.h"
#include "twice/notify.h"
#include "twice/registry.h"
#include "twice/schema.h"
#include "twice/version.h"

namespace twice {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual Reply handle(const Notify& notify, Env& env) = 0;
  // The tables this handler works on and where the checker finds the truth.
  virtual const Schema& schema() const { return reference_schema(); }
  // The background jobs (registered with TWICE_REGISTER_JOB) this handler's
  // design relies on, run in every scenario beside the scenario's own: an
  // outbox needs its relay. Each is made with age 0.
  virtual std::vector<std::string> jobs() const { return {}; }
};

struct HandlerInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Handler>()> make;
};

// The process-wide list of handlers, filled by TWICE_REGISTER_HANDLER (see
// twice/registry.h).
extern template class Registry<HandlerInfo>;
using HandlerRegistry = Registry<HandlerInfo>;

}  // namespace twice

#define TWICE_CONCAT_INNER(a, b) a##b
#define TWICE_CONCAT(a, b) TWICE_CONCAT_INNER(a, b)
// The registration entry point, with a C signature so that a plugin built
// against another API version reaches it safely: the version is checked first,
// and on a mismatch (or a name already taken) nothing is registered and false
// is returned. `make` returns a new handler owned by the caller.
extern "C" bool twice_register_handler(int api_version, const char* name, const char* description,
                                       ::twice::Handler* (*make)());

// Named by __COUNTER__, not __LINE__: a unity build compiles several handler
// files as one, and two registrations on the same line of two files (or two
// from one macro of a plugin's) were one name defined twice.
#define TWICE_REGISTER_HANDLER(Class, name, description)                                      \
  [[maybe_unused]] static const bool TWICE_CONCAT(twice_handler_registration_, __COUNTER__) = \
      ::twice_register_handler(TWICE_API_VERSION, name, description,                          \
                               []() -> ::twice::Handler* { return new Class(); })
