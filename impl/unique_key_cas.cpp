// unique-key+cas: the recommended design. Verify the signature; then in one
// transaction log the callback under a UNIQUE key, move the order
// WAIT_PAY -> PAID with a compare-and-swap, credit. A duplicate acks; a second
// payment for the order, or a payment for a closed order, is flagged for
// refund (never credited, never dropped).
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class UniqueKeyCas final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override { return apply_once(n, env); }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::UniqueKeyCas, "unique-key+cas",
                       "UNIQUE callback_log + compare-and-swap on status, one transaction (recommended)");
