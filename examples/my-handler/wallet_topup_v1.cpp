// wallet-topup-v1: the first version. Looks the payment up, and if it is still
// pending marks it paid and credits the wallet.
//
// BUG: the check and the update are separate statements. Two copies of one
// notification can both read 'pending' before either writes 'paid', and both
// credit: twice finds it as double_credit on concurrent-duplicates.
#include <twice/handler.h>

#include "wallet_schema.h"

namespace {

class WalletTopupV1 final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    if (!env.verify(n).ok()) return twice::Reply::fail("bad signature");
    twice::Db& db = env.db();
    const twice::Result payment = db.exec(
        "SELECT user_id, state FROM payments WHERE order_no = ? AND amount = ? AND currency = ?",
        {n.out_trade_no, n.amount, n.currency});
    if (!payment.ok() || payment.empty()) return twice::Reply::fail("unknown order or wrong amount");
    if (payment.at(0, "state").as_text() == "paid") return twice::Reply::ack(n);  // seen it already

    const std::string user = payment.at(0, "user_id").as_text();
    if (!db.exec("UPDATE payments SET state = 'paid', gateway_id = ? WHERE order_no = ?",
                 {n.transaction_id, n.out_trade_no}).ok() ||
        !db.exec("INSERT INTO wallet_credits(order_no, user_id, amount) VALUES (?, ?, ?)",
                 {n.out_trade_no, user, n.amount}).ok() ||
        !db.exec("UPDATE wallets SET balance = balance + ? WHERE user_id = ?", {n.amount, user}).ok())
      return twice::Reply::fail();
    return twice::Reply::ack(n);
  }

  const twice::Schema& schema() const override { return wallet_schema(); }
};

}  // namespace

TWICE_REGISTER_HANDLER(WalletTopupV1, "wallet-topup-v1", "check, then update and credit (double-credits)");
