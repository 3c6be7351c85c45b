// amount-in-yuan: the recommended design, but it credits the notify's amount
// divided by 100, as if the gateway sent yuan where the ledger keeps fen.
//
// BUG (wrong_amount): the order is paid once and credited once, to the ledger
// and the balance alike, so no count-based invariant and not lost_update can
// see it: a payment of 4200 fen credits 42. The division is an integer one,
// as the bug would be written, so an amount under 100 credits 0.
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class AmountInYuan final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    ApplyOptions options;
    options.credit_amount = [](const Notify& paid) { return paid.amount / 100; };
    return apply_once(n, env, options);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::AmountInYuan, "amount-in-yuan",
                       "canary: credits the amount divided by 100, yuan where the ledger keeps fen (wrong_amount)");
