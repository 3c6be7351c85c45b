#include "check/checker.h"

#include <algorithm>

#include <fmt/format.h>

#include "env/sqlite_db.h"

namespace twice::check {

const std::vector<InvariantInfo>& invariants() {
  static const std::vector<InvariantInfo> kInvariants = {
      {"double_credit", "an order has more than one credit in the ledger"},
      {"lost_update", "a balance differs from the sum of the credits the ledger holds for it"},
      {"lost_payment", "the gateway settled a payment and it was acked, yet no credit exists at quiescence"},
      {"stuck", "a handler never returned within its step budget (a livelock or an endless retry loop)"},
  };
  return kInvariants;
}

bool is_invariant(std::string_view name) {
  const auto& all = invariants();
  return std::any_of(all.begin(), all.end(), [&](const InvariantInfo& i) { return i.name == name; });
}

Verdict check_run(sqlite3* conn, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                  const std::vector<std::string>& stuck) {
  Verdict v;
  auto fail_query = [&](const Result& r, const char* what) {
    v.violations.push_back({"stuck", "database", fmt::format("the checker could not read {}: {}", what, r.status.to_string())});
  };

  const Result credits = env::query(conn, schema.credits_sql);
  if (!credits.ok()) fail_query(credits, "credits (Schema::credits_sql)");
  for (const auto& row : credits.rows) v.credits_per_order[row[0].as_text()] = static_cast<int>(row[1].as_int());

  for (const auto& p : payments) {
    const auto it = v.credits_per_order.find(p.order.order_no);
    const int n = it == v.credits_per_order.end() ? 0 : it->second;
    if (n > 1) {
      v.violations.push_back({"double_credit", p.order.order_no,
                              fmt::format("order {} was credited {} times for one payment of {}", p.order.order_no, n,
                                          p.order.amount)});
    }
    if (n == 0 && p.settled && p.acked) {
      v.violations.push_back({"lost_payment", p.order.order_no,
                              fmt::format("order {}: the gateway settled {} and got an ack, but nothing was credited",
                                          p.order.order_no, p.order.amount)});
    }
  }

  const Result accounts = env::query(conn, schema.balances_sql);
  if (!accounts.ok()) fail_query(accounts, "balances (Schema::balances_sql)");
  for (const auto& row : accounts.rows) {
    AccountState a{row[0].as_text(), row[1].as_int(), row[2].as_int(), 0};
    for (const auto& p : payments) {
      const bool credited = v.credits_per_order.count(p.order.order_no) > 0;
      if (p.order.user == a.user && p.settled && (credited || p.acked)) a.should_be += p.order.amount;
    }
    if (a.balance != a.ledger_sum) {
      v.violations.push_back({"lost_update", a.user,
                              fmt::format("account {} holds {} but its ledger credits sum to {}", a.user, a.balance,
                                          a.ledger_sum)});
    }
    v.accounts.push_back(std::move(a));
  }

  for (const auto& why : stuck) v.violations.push_back({"stuck", "", why});
  return v;
}

}  // namespace twice::check
