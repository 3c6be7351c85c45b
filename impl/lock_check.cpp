// lock-check: take a Redis lock on the order, then check-then-act inside it;
// release with a plain DEL.
//
// RELIES ON the lock outliving the critical section. BUG (double_credit) when
// a holder pauses past the TTL: a second delivery takes the expired lock, both
// read WAIT_PAY, both credit; the first one's plain DEL then frees the second
// one's lock too. The base scenarios never pause that long, so it passes them.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class LockCheck final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    const std::string key = "lock:order:" + n.out_trade_no;
    if (!env.locks().set_if_absent(key, env.token(), 10 * kSecond)) return Reply::fail("busy, retry later");

    Db& db = env.db();
    Reply reply = Reply::ack(n);
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) {
      reply = Reply::fail("unknown order or amount mismatch");
    } else if (order.status == "WAIT_PAY") {
      if (!db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                   {n.transaction_id, n.out_trade_no}).ok() ||
          !credit(db, n, order.user).ok())
        reply = Reply::fail();
    }
    env.locks().del(key);  // plain DEL: whoever holds it now
    return reply;
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::LockCheck, "lock-check",
                       "Redis lock, then check-then-act; plain DEL (breaks when a pause outlives the TTL)");
