// lock-only: take a Redis lock on the order, credit, release. No dedupe.
//
// BUG (double_credit): the lock serialises concurrent deliveries but forgets
// them; a retry that comes after the lock is released (the ack was lost) is
// credited again. A delivery that finds the lock held answers FAIL, so the
// gateway retries it later, after the release, and it credits again too.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class LockOnly final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    const std::string key = "lock:order:" + n.out_trade_no;
    const std::string owner = env.token();
    if (!env.locks().set_if_absent(key, owner, 30 * kSecond)) return Reply::fail("busy, retry later");

    Db& db = env.db();
    Reply reply = Reply::ack(n);
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) {
      reply = Reply::fail("unknown order or amount mismatch");
    } else {
      auto tx = db.begin(TxMode::kImmediate);
      if (!tx.ok() ||
          !db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                   {n.transaction_id, n.out_trade_no}).ok() ||
          !credit(db, n, order.user).ok() || !tx.commit().ok())
        reply = Reply::fail();
    }
    env.locks().compare_and_delete(key, owner);
    return reply;
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::LockOnly, "lock-only",
                       "Redis lock around the credit, no dedupe (a retry after release: double_credit)");
