// check-in-txn: the @Transactional handler of every Java tutorial. BEGIN;
// SELECT the order's status; if WAIT_PAY, UPDATE it to PAID and credit;
// COMMIT. It looks safe because "it is all in one transaction", and on SQLite
// it is: two copies both read WAIT_PAY under a shared lock, neither can take
// the write lock while the other reads, and the deadlock victim rolls back.
// On PostgreSQL READ COMMITTED (and InnoDB REPEATABLE READ) the second
// copy's UPDATE waits for the first's row lock, then updates the row it read
// as WAIT_PAY anyway, and credits again: double_credit. Under PostgreSQL
// REPEATABLE READ / SERIALIZABLE that UPDATE fails with a serialization
// failure instead; the handler answers 500 and the gateway's retry finds PAID.
#include "credit.h"
#include "events.h"
#include "twice/handler.h"

namespace twice::impl {
namespace {

class CheckInTxn final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    Db& db = env.db();
    auto tx = db.begin(TxMode::kDeferred);
    if (!tx.ok()) return Reply::fail();
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    if (order.status != "WAIT_PAY") return Reply::ack(n);  // "already handled"; the transaction rolls back
    if (!db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                 {n.transaction_id, n.out_trade_no}).ok() ||
        !credit(db, n, order.user).ok() || !tx.commit().ok())
      return Reply::fail();
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::CheckInTxn, "check-in-txn",
                       "BEGIN; SELECT status; UPDATE + credit; COMMIT (double_credit at PostgreSQL's and "
                       "MariaDB's READ COMMITTED and MariaDB's REPEATABLE READ)");
