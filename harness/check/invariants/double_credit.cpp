// double_credit: an order credited more than once for one payment.
#include <algorithm>

#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

namespace {

// " (rebates: 2, ledger: 1)": where the counts came from, when the order has
// rows in several tables that disagree (a rebate paid twice while the ledger
// holds one credit), so that the sentence does not read as a ledger's.
std::string where_counted(const OrderFacts& o) {
  auto rows = o.credit_rows;
  if (rows.size() < 2 ||
      std::all_of(rows.begin(), rows.end(), [&](const auto& r) { return r.second == rows.front().second; }))
    return {};
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [source, n] : rows)
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", source.empty() ? "a row of credits_sql" : source, n);
  return " (" + out + ")";
}

}  // namespace

void judge_double_credit(const Facts& facts, Findings& out) {
  for (const auto& o : facts.orders)
    if (o.credits > 1)
      out.emplace_back(Invariant::kDoubleCredit, o.order_no,
                       fmt::format("order {} was credited {} times for one payment of {}{}", o.order_no, o.credits,
                                   o.first->order.amount, where_counted(o)));
}

}  // namespace twice::check
