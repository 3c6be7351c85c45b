// refund-check-then-act: the recommended design for payments; for a refund it
// SELECTs the status and, if PAID, updates it and takes the credit back, each
// statement on its own.
//
// BUG (double_refund): two copies of one refund notify both read PAID before
// either writes REFUNDED; both take the credit back, and the user's balance
// goes below what they paid for.
#include "credit.h"
#include "events.h"
#include "recommended.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class RefundCheckThenAct final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kRefunded) return apply_once(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!order.found || order.amount != n.refund_amount) return Reply::fail("unknown order or refund amount mismatch");
    if (order.status != "PAID") return Reply::ack(n);  // "already refunded"
    if (!db.exec("UPDATE orders SET status = 'REFUNDED' WHERE order_no = ?", {n.out_trade_no}).ok())
      return Reply::fail();
    if (!reverse_credit(db, n, order.user).ok()) return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::RefundCheckThenAct, "refund-check-then-act",
                       "canary: SELECT then UPDATE for refunds, as separate statements (double_refund)");
