// false-success: three-layer, except that every error answers HTTP 200 with
// {"code":"FAIL"} in the body, as many frameworks' error handlers do.
//
// BUG (lost_payment, ack_before_commit): WeChat v3 reads the status before the
// body, so the 200 is an ack and it never retries. When the error was real (a
// crashed holder's lock still alive), the payment is never credited.
#include "events.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class FalseSuccess final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    const std::string key = "lock:order:" + n.out_trade_no;
    const std::string owner = env.token();
    if (!env.locks().set_if_absent(key, owner, 10 * kSecond)) return soft_fail();
    Reply reply = apply_once(n, env);
    env.locks().compare_and_delete(key, owner);
    if (reply.http_status != 200 && reply.http_status != 202) return soft_fail();
    return reply;
  }

 private:
  static Reply soft_fail() { return Reply{200, R"({"code":"FAIL","message":"try later"})"}; }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::FalseSuccess, "false-success",
                       "canary: answers 200 with a FAIL body on error; WeChat v3 never retries (lost_payment)");
