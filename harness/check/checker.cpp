#include "check/checker.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/raw_connection.h"

namespace twice::check {

const std::vector<InvariantInfo>& invariants() {
  static const std::vector<InvariantInfo> kInvariants = {
      {"double_credit", "an order has more than one credit in the ledger"},
      {"lost_update", "a balance differs from the sum of the credits the ledger holds for it"},
      {"lost_payment", "the gateway settled a payment, yet at quiescence it is neither credited nor flagged for refund"},
      {"ack_before_commit", "the gateway got an ack for a payment before its credit was committed (early, or committed later)"},
      {"accepted_invalid", "a forged, tampered, unknown-order, wrong-amount or replayed notify changed anything"},
      {"illegal_transition", "an order moved outside its state machine (CLOSED to PAID without a refund, a closed order credited)"},
      {"lost_refund", "the gateway refunded a payment, yet at quiescence the order still holds its credit"},
      {"double_refund", "an order's credit was taken back more often than the gateway refunded it"},
      {"unpaid_credit", "an order was credited though the gateway never settled a payment for it (a close or refund taken for a payment)"},
      {"payload_missing", "a credited payment's raw callback payload was not stored (scenarios that require it)"},
      {"stuck", "a handler never returned within its step budget (a livelock or an endless retry loop)"},
  };
  return kInvariants;
}

bool is_invariant(std::string_view name) {
  const auto& all = invariants();
  return std::any_of(all.begin(), all.end(), [&](const InvariantInfo& i) { return i.name == name; });
}

namespace {

std::set<std::string> first_column(engine::RawConnection& conn, const std::string& sql) {
  std::set<std::string> out;
  if (sql.empty()) return out;
  for (const auto& row : conn.query(sql).rows)
    if (!row.empty()) out.insert(row[0].as_text());
  return out;
}

bool allowed(const std::string& from, const std::string& to, bool refund_flagged) {
  if (from == "WAIT_PAY") return to == "PAID" || to == "CLOSED";
  if (from == "PAID") return to == "REFUNDED";
  if (from == "CLOSED") return to == "REFUNDED" || (to == "PAID" && refund_flagged);
  return false;
}

}  // namespace

bool settled_in_database(engine::RawConnection& conn, const Schema& schema, const std::string& order_no) {
  for (const auto& row : conn.query(schema.credits_sql).rows)
    if (row.size() >= 2 && row[0].as_text() == order_no && row[1].as_int() > 0) return true;
  return first_column(conn, schema.refunds_sql).count(order_no) > 0;
}

Verdict check_run(engine::RawConnection& conn, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                  const std::vector<std::string>& stuck, const std::vector<Violation>& observed,
                  const CheckOptions& options) {
  Verdict v;
  auto fail_query = [&](const Result& r, const char* what) {
    v.violations.push_back({"stuck", "database", fmt::format("the checker could not read {}: {}", what, r.status.to_string())});
  };

  const Result credits = conn.query(schema.credits_sql);
  if (!credits.ok()) fail_query(credits, "credits (Schema::credits_sql)");
  for (const auto& row : credits.rows) v.credits_per_order[row[0].as_text()] = static_cast<int>(row[1].as_int());
  v.refunded = first_column(conn, schema.refunds_sql);
  std::map<std::string, int> reversals;
  if (!schema.reversals_sql.empty()) {
    const Result r = conn.query(schema.reversals_sql);
    if (!r.ok()) fail_query(r, "reversals (Schema::reversals_sql)");
    for (const auto& row : r.rows) reversals[row[0].as_text()] = static_cast<int>(row[1].as_int());
  }
  std::set<std::string> accepted_invalid;
  for (const auto& o : observed)
    if (o.invariant == "accepted_invalid") accepted_invalid.insert(o.subject);
  const std::set<std::string> payloads = first_column(conn, schema.payloads_sql);
  std::map<std::string, std::string> status;
  if (!schema.statuses_sql.empty())
    for (const auto& row : conn.query(schema.statuses_sql).rows) status[row[0].as_text()] = row[1].as_text();

  // Per order: every settled payment must be credited once or flagged for refund.
  std::map<std::string, std::vector<const gateway::PaymentRecord*>> by_order;
  std::vector<std::string> order_list;
  for (const auto& p : payments) {
    if (!by_order.count(p.order.order_no)) order_list.push_back(p.order.order_no);
    by_order[p.order.order_no].push_back(&p);
  }
  for (const auto& order : order_list) {
    const auto& ps = by_order[order];
    const gateway::PaymentRecord& p = *ps.front();
    int settled = 0;
    bool acked = false, gateway_refunded = false;
    for (const auto* q : ps) {
      settled += q->settled;
      acked |= q->acked;
      gateway_refunded |= q->refunded;
    }
    const auto it = v.credits_per_order.find(order);
    const int n = it == v.credits_per_order.end() ? 0 : it->second;
    const int refunded = v.refunded.count(order) ? 1 : 0;
    const int reversed = reversals.count(order) ? reversals[order] : 0;
    // A payment the gateway gave back need not be kept: credited and taken
    // back, or never credited at all.
    const int kept = settled - (gateway_refunded ? 1 : 0);
    const int net = n - reversed;
    if (n > 1) {
      v.violations.push_back({"double_credit", order,
                              fmt::format("order {} was credited {} times for one payment of {}", order, n, p.order.amount)});
    }
    if (gateway_refunded && !schema.reversals_sql.empty() && n > 0 && reversed == 0) {
      v.violations.push_back({"lost_refund", order,
                              fmt::format("the gateway refunded {} of order {} to {}, yet the order still holds its "
                                          "credit",
                                          p.order.amount, order, p.order.user)});
    }
    if (reversed > (gateway_refunded ? 1 : 0) || reversed > n) {
      v.violations.push_back(
          {"double_refund", order,
           reversed > n          ? fmt::format("order {}: its credit was taken back {} times but given {}", order,
                                               reversed, n)
           : !gateway_refunded ? fmt::format("order {}: its credit was taken back, yet the gateway refunded nothing",
                                             order)
                               : fmt::format("order {}: its credit was taken back {} times for one refund", order,
                                             reversed)});
    }
    if (settled == 0 && n > 0 && !accepted_invalid.count(order)) {
      v.violations.push_back({"unpaid_credit", order,
                              fmt::format("order {} was credited {}, yet the gateway settled no payment for it{}", order,
                                          p.order.amount, ps.front()->closed ? " (it closed the trade)" : "")});
    }
    if (kept > 0 && std::min(std::max(net, 0), 1) + refunded < kept) {
      std::string detail =
          settled > 1 ? fmt::format("order {} was paid {} times; {} credited and {} flagged for refund", order, settled,
                                    std::min(n, 1), refunded)
                      : fmt::format("order {}: the gateway settled {} ({}), but it was neither credited nor flagged "
                                    "for refund",
                                    order, p.order.amount, acked ? "and got an ack" : "never acked");
      v.violations.push_back({"lost_payment", order, std::move(detail)});
    }
    if (n > 0 && status.count(order) && status[order] == "CLOSED") {
      v.violations.push_back({"illegal_transition", order, fmt::format("order {} is CLOSED but was credited", order)});
    }
    if (options.payload_required && n > 0 && !schema.payloads_sql.empty() && !payloads.count(order)) {
      v.violations.push_back({"payload_missing", order,
                              fmt::format("order {} was credited but its callback payload was not stored", order)});
    }
  }

  if (!schema.transitions_sql.empty()) {
    std::set<std::string> reported;
    for (const auto& row : conn.query(schema.transitions_sql).rows) {
      const std::string order = row[0].as_text(), from = row[1].as_text(), to = row[2].as_text();
      if (allowed(from, to, v.refunded.count(order) > 0) || !reported.insert(order).second) continue;
      v.violations.push_back({"illegal_transition", order,
                              fmt::format("order {} moved {} -> {}{}", order, from, to,
                                          from == "CLOSED" && to == "PAID" ? " with no refund flagged" : "")});
    }
  }

  const Result accounts = conn.query(schema.balances_sql);
  if (!accounts.ok()) fail_query(accounts, "balances (Schema::balances_sql)");
  for (const auto& row : accounts.rows) {
    AccountState a{row[0].as_text(), row[1].as_int(), row[2].as_int(), 0};
    // Each order the user paid, once: its payments the gateway did not give
    // back, less the one flagged for the merchant to refund.
    std::map<std::string, int> kept;
    for (const auto& p : payments)
      if (p.order.user == a.user && p.settled && !p.refunded) ++kept[p.order.order_no];
    for (const auto& [order, n] : kept)
      if (n - (v.refunded.count(order) ? 1 : 0) > 0) a.should_be += by_order[order].front()->order.amount;
    if (a.balance != a.ledger_sum) {
      v.violations.push_back({"lost_update", a.user,
                              fmt::format("account {} holds {} but its ledger credits sum to {}", a.user, a.balance,
                                          a.ledger_sum)});
    }
    v.accounts.push_back(std::move(a));
  }

  for (const auto& o : observed) v.violations.push_back(o);
  for (const auto& why : stuck) v.violations.push_back({"stuck", "", why});
  // One line per invariant and subject, in a stable order.
  std::stable_sort(v.violations.begin(), v.violations.end(),
                   [](const Violation& a, const Violation& b) { return a.invariant < b.invariant; });
  return v;
}

}  // namespace twice::check
