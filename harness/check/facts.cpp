#include "check/facts.h"

#include <fmt/format.h>

namespace twice::check {

namespace {

// The oracle queries read_facts() runs, in one round trip on a server engine
// (RawConnection::query_each). An empty query reads as no rows.
class OracleReads {
 public:
  OracleReads(env::RawConnection& db, const std::vector<std::pair<const std::string*, const char*>>& queries,
              Facts& facts) {
    // The same texts every run of a schema: kept per thread and compared,
    // not copied again (seven strings a run, issue #12).
    thread_local std::vector<std::string> sqls;
    std::size_t n = 0;
    for (const auto& [sql, what] : queries) {
      if (sql->empty()) continue;
      if (n == sqls.size()) sqls.emplace_back();
      if (sqls[n] != *sql) sqls[n] = *sql;
      ++n;
    }
    sqls.resize(n);
    std::vector<Result> answers = db.query_each(sqls);
    std::size_t next = 0;
    for (const auto& [sql, what] : queries) {
      if (sql->empty()) {
        results_.emplace_back();
        continue;
      }
      Result r = std::move(answers[next++]);
      // A failure is recorded, and reads as no rows.
      if (!r.ok())
        facts.oracle_errors.emplace_back(Invariant::kOracleError, "database",
                                         fmt::format("the checker could not read {}: {}", what, r.status.to_string()));
      results_.push_back(std::move(r));
    }
  }
  const Result& operator[](std::size_t i) const { return results_[i]; }

 private:
  std::vector<Result> results_;
};

}  // namespace

Facts read_facts(env::RawConnection& db, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                 const std::set<std::string>& accepted_invalid, const CheckOptions& options) {
  Facts f;
  f.schema = &schema;
  f.options = options;

  const OracleReads read(db,
                         {{&schema.credits_sql, "credits (Schema::credits_sql)"},
                          {&schema.refunds_sql, "refunds (Schema::refunds_sql)"},
                          {&schema.reversals_sql, "reversals (Schema::reversals_sql)"},
                          {&schema.payloads_sql, "payloads (Schema::payloads_sql)"},
                          {&schema.statuses_sql, "statuses (Schema::statuses_sql)"},
                          {&schema.transitions_sql, "transitions (Schema::transitions_sql)"},
                          {&schema.balances_sql, "balances (Schema::balances_sql)"}},
                         f);
  for (const auto& row : read[0].rows) f.credits_per_order[row[0].as_text()] = static_cast<int>(row[1].as_int());
  for (const auto& row : read[1].rows)
    if (!row.empty()) f.refunded.insert(row[0].as_text());
  std::map<std::string, int> reversals;
  for (const auto& row : read[2].rows) reversals[row[0].as_text()] = static_cast<int>(row[1].as_int());
  std::set<std::string> payloads;
  for (const auto& row : read[3].rows)
    if (!row.empty()) payloads.insert(row[0].as_text());
  std::map<std::string, std::string> status;
  for (const auto& row : read[4].rows) status[row[0].as_text()] = row[1].as_text();
  for (const auto& row : read[5].rows) f.transitions.push_back({row[0].as_text(), row[1].as_text(), row[2].as_text()});

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

  for (const auto& row : read[6].rows) {
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
