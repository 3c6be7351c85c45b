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
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "twice/env.h"
#include "twice/notify.h"
#include "twice/schema.h"

namespace twice {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual Reply handle(const Notify& notify, Env& env) = 0;
  // The tables this handler works on and where the checker finds the truth.
  virtual const Schema& schema() const { return reference_schema(); }
};

struct HandlerInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Handler>()> make;
};

// The process-wide list of handlers, filled by TWICE_REGISTER_HANDLER at static
// initialisation. Thread-safe to read once main() has started.
class HandlerRegistry {
 public:
  static HandlerRegistry& instance();
  // Returns false (and registers nothing) when the name is taken.
  bool add(HandlerInfo info);
  const HandlerInfo* find(std::string_view name) const;
  // Sorted by name.
  std::vector<const HandlerInfo*> all() const;

 private:
  std::vector<HandlerInfo> handlers_;
};

namespace detail {
struct HandlerRegistration {
  HandlerRegistration(std::string name, std::string description,
                      std::function<std::unique_ptr<Handler>()> make);
};
}  // namespace detail

}  // namespace twice

#define TWICE_CONCAT_INNER(a, b) a##b
#define TWICE_CONCAT(a, b) TWICE_CONCAT_INNER(a, b)
#define TWICE_REGISTER_HANDLER(Class, name, description)                      \
  static const ::twice::detail::HandlerRegistration TWICE_CONCAT(            \
      twice_handler_registration_, __LINE__)(name, description,              \
                                             [] { return std::unique_ptr<::twice::Handler>(new Class()); })
