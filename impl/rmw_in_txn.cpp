// rmw-in-txn: the whole payment in one transaction, dedupe by compare-and-
// swap on the order, but the balance written back as `<balance read> +
// amount`, as an ORM that loads the account entity and saves it does. A
// transaction the engine aborts (serialization failure, deadlock victim,
// SQLite's busy deadlock) is run again from BEGIN, as a retrying
// @Transactional does. On SQLite the two writers serialize and the loser
// retries: no loss. On PostgreSQL READ COMMITTED two top-ups of one user
// both read the old balance, the second UPDATE waits for the first's commit
// and then overwrites it: lost_update (Hermitage's P4). Under REPEATABLE READ
// that UPDATE is a serialization failure, and the retry reads the new balance.
#include "credit.h"
#include "events.h"
#include <optional>

#include "twice/handler.h"

namespace twice::impl {
namespace {

class RmwInTxn final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    Db& db = env.db();
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      Status failed;
      if (std::optional<Reply> reply = attempt_once(db, n, failed)) return *reply;
      if (!failed.is_retryable()) return Reply::fail();
      env.note(fmt_retry(attempt, failed));
    }
    return Reply::fail("gave up after repeated serialization failures");
  }

 private:
  static constexpr int kAttempts = 5;  // tries of the whole transaction

  static std::string fmt_retry(int attempt, const Status& why) {
    return "attempt " + std::to_string(attempt) + " aborted (" + why.to_string() + "): the whole transaction again";
  }

  // One transaction. A reply, or nullopt with `failed` set to why it aborted.
  static std::optional<Reply> attempt_once(Db& db, const Notify& n, Status& failed) {
    auto tx = db.begin(TxMode::kDeferred);
    if (!tx.ok()) {
      failed = tx.status();
      return std::nullopt;
    }
    const OrderRow order = load_order(db, n.out_trade_no);
    if (!matches(order, n)) return Reply::fail("unknown order or amount mismatch");
    const Result swapped = db.exec(
        "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
        {n.transaction_id, n.out_trade_no});
    if (!swapped.ok()) {
      failed = swapped.status;
      return std::nullopt;
    }
    if (swapped.changes == 0) return Reply::ack(n);  // a duplicate: already paid
    const Result account = db.exec("SELECT balance FROM accounts WHERE user_id = ?", {order.user});
    if (!account.ok() || account.empty()) {
      failed = account.status;
      return std::nullopt;
    }
    const std::int64_t balance_read = account.rows[0][0].as_int();
    Result r = db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)",
                       {n.out_trade_no, order.user, n.amount});
    if (r.ok()) r = db.exec("UPDATE accounts SET balance = ? WHERE user_id = ?", {balance_read + n.amount, order.user});
    if (r.ok()) r.status = tx.commit();
    if (!r.ok()) {
      failed = r.status;
      return std::nullopt;
    }
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::RmwInTxn, "rmw-in-txn",
                       "one transaction, retried whole; balance = <value read> + amount (lost_update at PostgreSQL's "
                       "and MariaDB's READ COMMITTED and MariaDB's REPEATABLE READ)");
