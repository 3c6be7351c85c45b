// A plugin as a user builds it: one handler, the public headers only (the
// twice::plugin target), its symbols resolved against the `twice` executable.
// Built twice by tests/library: as is, and with TWICE_API_VERSION_OVERRIDE to
// play a plugin compiled against another version of twice.
#include "twice/handler.h"

namespace {

// Compare-and-swap on the status and the credit, in one transaction.
class PluginCas final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    twice::Db& db = env.db();
    auto tx = db.begin(twice::TxMode::kImmediate);
    if (!tx.ok()) return twice::Reply::fail();
    const twice::Result order = db.exec("SELECT user_id FROM orders WHERE order_no = ? AND amount = ? AND currency = ?",
                                        {n.out_trade_no, n.amount, n.currency});
    if (!order.ok() || order.empty()) return twice::Reply::fail("unknown order");
    const std::string user = order.at(0, "user_id").as_text();
    const twice::Result swapped =
        db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
                {n.transaction_id, n.out_trade_no});
    if (!swapped.ok()) return twice::Reply::fail();
    if (swapped.changes == 0) return twice::Reply::success();
    if (!db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)", {n.out_trade_no, user, n.amount}).ok() ||
        !db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", {n.amount, user}).ok() ||
        !tx.commit().ok())
      return twice::Reply::fail();
    return twice::Reply::success();
  }
};

}  // namespace

TWICE_REGISTER_HANDLER(PluginCas, "plugin-cas", "from a plugin: compare-and-swap and credit in one transaction");
