// three-layer: a Redis lock (owner token, TTL, compare-and-delete release) in
// front of the recommended design (unique key + optimistic status update in
// one transaction). The lock only sheds load; the database layers carry the
// guarantee, so an expired lock costs nothing.
#include "events.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class ThreeLayer final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    const std::string key = "lock:order:" + n.out_trade_no;
    const std::string owner = env.token();
    if (!env.locks().set_if_absent(key, owner, 10 * kSecond)) return Reply::fail("busy, retry later");
    const Reply reply = apply_once(n, env);
    env.locks().compare_and_delete(key, owner);
    return reply;
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::ThreeLayer, "three-layer",
                       "lock + unique key + optimistic status update; the lock only sheds load");
