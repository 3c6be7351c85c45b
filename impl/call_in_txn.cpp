// call-in-txn: calls the warehouse, the mail service and inventory inside the
// payment's transaction, before COMMIT, so that "paid" and "shipped" look
// like one unit of work.
//
// BUG: a service call cannot join the transaction. When the warehouse times
// out after it shipped, the handler rolls back and fails the delivery; the
// gateway retries and the goods ship again (duplicate_effect). When the
// process dies between the call and COMMIT, the order is shipped and not paid
// until a retry ships it again.
#include "effects.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class CallInTxn final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    ApplyOptions options;
    options.before_commit = [](Env& e, const Notify& notify) {
      for (const auto& effect : kOrderEffects)
        if (ServiceReply r = e.call(effect.service, request_for(effect, notify.out_trade_no)); !r.ok()) return r.status;
      return Status::OK();
    };
    return apply_once(n, env, options);
  }
  const Schema& schema() const override { return effects_schema(); }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::CallInTxn, "call-in-txn",
                       "ships, mails and takes stock inside the payment's transaction (a call cannot roll back)");
