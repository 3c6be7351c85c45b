// select-for-update: the pessimistic defence. BEGIN; SELECT the order FOR
// UPDATE, which takes its row lock before reading, so a second copy waits at
// the SELECT and then reads PAID; UPDATE and credit; COMMIT. SQLite has no
// FOR UPDATE: BEGIN IMMEDIATE takes the database's write lock up front,
// which serializes the copies the same way. A transaction the engine aborts
// (REPEATABLE READ's serialization failure when the row changed under it, a
// deadlock victim) is run again from BEGIN. Correct on every engine; like
// cas it keeps no callback_log (audit-trail's payload) and needs the
// reconciler for lost notifications.
#include "credit.h"
#include "events.h"
#include <optional>

#include "twice/handler.h"

namespace twice::impl {
namespace {

class SelectForUpdate final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    if (event_kind(n) != EventKind::kPaid) return handle_other_event(n, env);
    if (!env.verify(n).ok()) return Reply::fail("bad signature");
    Db& db = env.db();
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      Status failed;
      if (std::optional<Reply> reply = attempt_once(db, n, failed)) return *reply;
      if (!failed.is_retryable()) return Reply::fail();
      env.note("transaction aborted (" + failed.to_string() + "): the whole transaction again");
    }
    return Reply::fail("gave up after repeated serialization failures");
  }

 private:
  static constexpr int kAttempts = 5;  // tries of the whole transaction

  static std::optional<Reply> attempt_once(Db& db, const Notify& n, Status& failed) {
    const bool sqlite = db.engine() == Engine::kSqlite;
    auto tx = db.begin(TxMode::kImmediate);
    if (!tx.ok()) {
      failed = tx.status();
      return std::nullopt;
    }
    const Result r = db.exec(sqlite ? "SELECT user_id, amount, currency, status FROM orders WHERE order_no = ?"
                                    : "SELECT user_id, amount, currency, status FROM orders WHERE order_no = ? FOR UPDATE",
                             {n.out_trade_no});
    if (!r.ok()) {
      failed = r.status;
      return std::nullopt;
    }
    if (r.empty() || r.rows[0][1].as_int() != n.amount || r.rows[0][2].as_text() != n.currency)
      return Reply::fail("unknown order or amount mismatch");
    const std::string user = r.rows[0][0].as_text();
    if (r.rows[0][3].as_text() != "WAIT_PAY") {
      OrderRow order = load_order(db, n.out_trade_no);
      return settle_unswapped(db, tx, order, n);
    }
    Status s = db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                       {n.transaction_id, n.out_trade_no})
                   .status;
    if (s.ok()) s = credit(db, n, user);
    if (s.ok()) s = tx.commit();
    if (!s.ok()) {
      failed = s;
      return std::nullopt;
    }
    return Reply::ack(n);
  }
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_HANDLER(twice::impl::SelectForUpdate, "select-for-update",
                       "BEGIN; SELECT ... FOR UPDATE (BEGIN IMMEDIATE on SQLite); UPDATE + credit; COMMIT (correct)");
