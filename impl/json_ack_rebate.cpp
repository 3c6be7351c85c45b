// json-ack-rebate (a public incident): an Alipay handler that credits
// correctly but answers JSON instead of the bare word "success", and pays the
// referrer's rebate before its dedupe, on every notify.
//
// BUG (double_credit): Alipay never sees its ack, re-notifies at 4m, 10m, 10m,
// 1h ..., and each resend pays the rebate again.
#include "events.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class JsonAckRebate final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    env.db().exec("INSERT INTO rebates(order_no, referrer, amount) VALUES (?, 'referrer', ?)",
                  {n.out_trade_no, n.amount / 20});
    const Reply applied = apply_once(n, env);
    if (applied.http_status >= 300) return applied;
    return Reply{200, R"({"result":"success"})"};  // Alipay wants exactly: success
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::JsonAckRebate, "json-ack-rebate",
                       "incident: answers Alipay with JSON, so each resend pays the referral rebate again");
