// lock-release-any: a Redis lock held for the whole delivery, released in a
// `finally` (RAII guard) with a plain DEL, and check-then-act inside it.
//
// BUG (double_credit): when the holder pauses past the TTL, a second delivery
// takes the expired lock; the first one's plain DEL then removes the second
// one's lock too, and a third walks in. The lock protected nothing.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class LockReleaseAny final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    const std::string key = "lock:order:" + n.out_trade_no;
    if (!env.locks().set_if_absent(key, env.token(), 10 * kSecond)) return Reply::fail("busy, retry later");
    struct Release {  // finally { redis.del(key) }
      Env& env;
      const std::string& key;
      ~Release() { env.locks().del(key); }
    } release{env, key};

    Db& db = env.db();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    if (order.status != "WAIT_PAY") return Reply::ack(n);
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok() ||
        !db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                 {n.transaction_id, n.out_trade_no}).ok() ||
        !credit(db, n, order.user).ok() || !tx.commit().ok())
      return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::LockReleaseAny, "lock-release-any",
                       "canary: plain DEL in finally frees another holder's lock after the TTL (double_credit)");
