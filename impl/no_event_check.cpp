// no-event-check: the recommended design for payments, but it never reads the
// event type: every notify that reaches it is taken for "payment succeeded".
//
// BUG (unpaid_credit, lost_refund): Alipay's TRADE_CLOSED for a trade never
// paid moves the order WAIT_PAY -> PAID and credits it; a refund notify for a
// paid order is taken for a duplicate payment and acknowledged, so the credit
// is never taken back.
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class NoEventCheck final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    ApplyOptions options;
    options.dispatch_events = false;
    return apply_once(n, env, options);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::NoEventCheck, "no-event-check",
                       "canary: takes every notify for a payment, closes and refunds too (unpaid_credit, lost_refund)");
