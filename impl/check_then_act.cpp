// check-then-act: SELECT the status; if WAIT_PAY, UPDATE and credit, each as
// its own autocommit statement.
//
// BUG (double_credit): two deliveries of one notify can both read WAIT_PAY
// before either writes PAID; both then credit. Sequential duplicates are
// harmless: the second delivery reads PAID.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class CheckThenAct final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    Db& db = env.db();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    if (order.status != "WAIT_PAY") return Reply::ack(n);  // "already handled"

    if (!db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                 {n.transaction_id, n.out_trade_no}).ok())
      return Reply::fail();
    if (!credit(db, n, order.user).ok()) return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::CheckThenAct, "check-then-act",
                       "SELECT status, then UPDATE and credit as separate statements (races: double_credit)");
