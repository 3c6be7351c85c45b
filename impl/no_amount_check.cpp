// no-amount-check: the recommended design with a verified signature, but it
// never compares the notify's amount and currency with the order.
//
// BUG (accepted_invalid): a validly signed notify for 1% of the price (the
// user paid less through a tampered client) marks the order paid in full.
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class NoAmountCheck final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override { return apply_once(n, env, ApplyOptions{false, true}); }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::NoAmountCheck, "no-amount-check",
                       "canary: verifies the signature but not amount and currency (accepted_invalid)");
