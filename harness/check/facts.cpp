#include "check/facts.h"

#include <algorithm>

#include <fmt/format.h>

namespace twice::check {

namespace {

// The oracle queries read_facts() runs, in the order a server engine gets
// them in its one round trip (RawConnection::read_each).
enum Oracle { kCredits, kRefunds, kReversals, kPayloads, kStatuses, kTransitions, kBalances, kOracles };

// Column `c` of `row`, or what a missing column reads as (a null Value).
std::string text(const env::RowView& row, std::size_t c) {
  return c < row.size() ? std::string(row.text(c)) : std::string();
}
std::int64_t integer(const env::RowView& row, std::size_t c) { return c < row.size() ? row.integer(c) : 0; }

// The columns each query must return at least (twice/schema.h), and what they are.
constexpr std::size_t kColumns[kOracles] = {2, 1, 2, 1, 2, 3, 3};
constexpr const char* kColumnNames[kOracles] = {
    "(order_no, credits)", "(order_no)", "(order_no, reversals)", "(order_no)", "(order_no, status)",
    "(order_no, from, to)", "(user, balance, credited)"};

struct Balance {
  std::string user;
  std::int64_t balance, ledger_sum;
};

}  // namespace

Facts read_facts(env::RawConnection& db, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                 const std::set<std::string>& accepted_invalid, const CheckOptions& options) {
  Facts f;
  f.schema = &schema;
  f.options = options;

  const std::pair<const std::string*, const char*> queries[kOracles] = {
      {&schema.credits_sql, "credits (Schema::credits_sql)"},
      {&schema.refunds_sql, "refunds (Schema::refunds_sql)"},
      {&schema.reversals_sql, "reversals (Schema::reversals_sql)"},
      {&schema.payloads_sql, "payloads (Schema::payloads_sql)"},
      {&schema.statuses_sql, "statuses (Schema::statuses_sql)"},
      {&schema.transitions_sql, "transitions (Schema::transitions_sql)"},
      {&schema.balances_sql, "balances (Schema::balances_sql)"}};
  // The same texts every run of a schema: kept per thread and compared, not
  // copied again. An empty query is not sent and reads as no rows.
  thread_local std::vector<std::string> sqls;
  Oracle sent[kOracles];
  std::size_t n = 0;
  for (int q = 0; q < kOracles; ++q) {
    const std::string& sql = *queries[q].first;
    if (sql.empty()) continue;
    if (n == sqls.size()) sqls.emplace_back();
    if (sqls[n] != sql) sqls[n] = sql;
    sent[n++] = static_cast<Oracle>(q);
  }
  sqls.resize(n);

  std::map<std::string, int> reversals;
  std::set<std::string> payloads;
  std::map<std::string, std::string> status;
  std::vector<Balance> balances;
  // Each query fills its own container, so a failed one is emptied again.
  auto drop = [&](Oracle q) {
    switch (q) {
      case kCredits:
        f.credits_per_order.clear();
        f.credit_rows.clear();
        break;
      case kRefunds: f.refunded.clear(); break;
      case kReversals: reversals.clear(); break;
      case kPayloads: payloads.clear(); break;
      case kStatuses: status.clear(); break;
      case kTransitions: f.transitions.clear(); break;
      case kBalances: balances.clear(); break;
      case kOracles: break;
    }
  };
  // A query that returns fewer columns than its facts need would read as
  // zeros and empty texts: a correct service shown to lose its payments.
  std::size_t narrow[kOracles] = {};  // 1 + the columns of the first such row
  const std::vector<Status> read = db.read_each(sqls, [&](std::size_t i, const env::RowView& row) {
    if (row.size() < kColumns[sent[i]]) {
      if (narrow[i] == 0) narrow[i] = row.size() + 1;
      return;
    }
    switch (sent[i]) {
      case kCredits: {
        // An order on several rows (one per table that records credits) counts the largest.
        const int n = static_cast<int>(integer(row, 1));
        if (auto [it, added] = f.credits_per_order.try_emplace(text(row, 0), n); !added) it->second = std::max(it->second, n);
        f.credit_rows[text(row, 0)].emplace_back(text(row, 2), n);  // where it was counted, when the query says
        break;
      }
      case kRefunds:
        if (row.size() > 0) f.refunded.insert(text(row, 0));
        break;
      case kReversals: reversals[text(row, 0)] = static_cast<int>(integer(row, 1)); break;
      case kPayloads:
        if (row.size() > 0) payloads.insert(text(row, 0));
        break;
      case kStatuses: status[text(row, 0)] = text(row, 1); break;
      case kTransitions: f.transitions.push_back({text(row, 0), text(row, 1), text(row, 2)}); break;
      case kBalances: balances.push_back({text(row, 0), integer(row, 1), integer(row, 2)}); break;
      case kOracles: break;
    }
  });
  // A failure is recorded, and reads as no rows.
  for (std::size_t i = 0; i < n; ++i) {
    if (read[i].ok() && narrow[i] == 0) continue;
    drop(sent[i]);
    const std::string why =
        !read[i].ok() ? read[i].to_string()
                      : fmt::format("a row of {} column{}, where it must return {} at least", narrow[i] - 1,
                                    narrow[i] == 2 ? "" : "s", kColumnNames[sent[i]]);
    f.oracle_errors.emplace_back(Invariant::kOracleError, "database",
                                 fmt::format("the checker could not read {}: {} (the run's end is not judged "
                                             "until it can)",
                                             queries[sent[i]].second, why));
  }

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
    if (auto c = f.credit_rows.find(o.order_no); c != f.credit_rows.end() && c->second.size() > 1) o.credit_rows = c->second;
    if (auto r = reversals.find(o.order_no); r != reversals.end()) o.reversals = r->second;
    o.refund_flagged = f.refunded.count(o.order_no) > 0;
    if (auto s = status.find(o.order_no); s != status.end()) o.status = s->second;
    o.payload_stored = payloads.count(o.order_no) > 0;
    o.accepted_invalid = accepted_invalid.count(o.order_no) > 0;
  }

  // What each account should hold: each order its user paid, once: the
  // order's payments the gateway did not give back, less the one flagged for
  // the merchant to refund. Gathered by user in one pass over the payments
  // (a pass per account made the checker's cost grow with the square of the
  // orders, issue #12).
  std::map<std::string, std::map<std::string, int>> kept_by_user;
  for (const auto& p : payments)
    if (p.settled && !p.refunded) ++kept_by_user[p.order.user][p.order.order_no];
  for (auto& b : balances) {
    AccountState a{std::move(b.user), b.balance, b.ledger_sum, 0};
    if (auto kept = kept_by_user.find(a.user); kept != kept_by_user.end())
      for (const auto& [order, n] : kept->second)
        if (n - (f.refunded.count(order) ? 1 : 0) > 0) a.should_be += f.orders[index[order]].first->order.amount;
    f.accounts.push_back(std::move(a));
  }
  return f;
}

}  // namespace twice::check
