#include "check/facts.h"

#include <fmt/format.h>

namespace twice::check {

namespace {

// Runs one oracle query; a failure is recorded, and reads as no rows.
Result read(env::RawConnection& db, const std::string& sql, const char* what, Facts& facts) {
  if (sql.empty()) return Result{};
  Result r = db.query(sql);
  if (!r.ok())
    facts.oracle_errors.emplace_back(Invariant::kOracleError, "database",
                                     fmt::format("the checker could not read {}: {}", what, r.status.to_string()));
  return r;
}

}  // namespace

Facts read_facts(env::RawConnection& db, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                 const std::set<std::string>& accepted_invalid, const CheckOptions& options) {
  Facts f;
  f.schema = &schema;
  f.options = options;

  for (const auto& row : read(db, schema.credits_sql, "credits (Schema::credits_sql)", f).rows)
    f.credits_per_order[row[0].as_text()] = static_cast<int>(row[1].as_int());
  for (const auto& row : read(db, schema.refunds_sql, "refunds (Schema::refunds_sql)", f).rows)
    if (!row.empty()) f.refunded.insert(row[0].as_text());
  std::map<std::string, int> reversals;
  for (const auto& row : read(db, schema.reversals_sql, "reversals (Schema::reversals_sql)", f).rows)
    reversals[row[0].as_text()] = static_cast<int>(row[1].as_int());
  std::set<std::string> payloads;
  for (const auto& row : read(db, schema.payloads_sql, "payloads (Schema::payloads_sql)", f).rows)
    if (!row.empty()) payloads.insert(row[0].as_text());
  std::map<std::string, std::string> status;
  for (const auto& row : read(db, schema.statuses_sql, "statuses (Schema::statuses_sql)", f).rows)
    status[row[0].as_text()] = row[1].as_text();
  for (const auto& row : read(db, schema.transitions_sql, "transitions (Schema::transitions_sql)", f).rows)
    f.transitions.push_back({row[0].as_text(), row[1].as_text(), row[2].as_text()});

  std::map<std::string, std::size_t> index;
  for (const auto& p : payments) {
    auto [it, added] = index.emplace(p.order.order_no, f.orders.size());
    if (added) {
      OrderFacts o;
      o.order_no = p.order.order_no;
      o.first = &p;
      o.gateway_closed = p.closed;
      f.orders.push_back(std::move(o));
    }
    OrderFacts& o = f.orders[it->second];
    o.settled += p.settled;
    o.acked |= p.acked;
    o.gateway_refunded |= p.refunded;
  }
  for (auto& o : f.orders) {
    if (auto c = f.credits_per_order.find(o.order_no); c != f.credits_per_order.end()) o.credits = c->second;
    if (auto r = reversals.find(o.order_no); r != reversals.end()) o.reversals = r->second;
    o.refund_flagged = f.refunded.count(o.order_no) > 0;
    if (auto s = status.find(o.order_no); s != status.end()) o.status = s->second;
    o.payload_stored = payloads.count(o.order_no) > 0;
    o.accepted_invalid = accepted_invalid.count(o.order_no) > 0;
  }

  for (const auto& row : read(db, schema.balances_sql, "balances (Schema::balances_sql)", f).rows) {
    AccountState a{row[0].as_text(), row[1].as_int(), row[2].as_int(), 0};
    // Each order the user paid, once: its payments the gateway did not give
    // back, less the one flagged for the merchant to refund.
    std::map<std::string, int> kept;
    for (const auto& p : payments)
      if (p.order.user == a.user && p.settled && !p.refunded) ++kept[p.order.order_no];
    for (const auto& [order, n] : kept)
      if (n - (f.refunded.count(order) ? 1 : 0) > 0) a.should_be += f.orders[index[order]].first->order.amount;
    f.accounts.push_back(std::move(a));
  }
  return f;
}

}  // namespace twice::check
