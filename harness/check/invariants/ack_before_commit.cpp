#include <fmt/format.h>

#include "check/invariants/during_run.h"

namespace twice::check {

namespace {

// Whether query `sql` has a committed row for `order_no` (its first column),
// with a count above zero in its second when `count_column`.
bool has_row_for(env::RawConnection& db, const std::string& sql, const std::string& order_no, bool count_column) {
  if (sql.empty()) return false;
  // find_committed() hands on the order's rows only.
  return db.find_committed(sql, order_no, [&](const env::RowView& row) {
    return !count_column || (row.size() >= 2 && row.integer(1) > 0);
  });
}

}  // namespace

bool settled_in_database(env::RawConnection& db, const Schema& schema, const std::string& order_no) {
  return has_row_for(db, schema.credits_sql, order_no, true) || has_row_for(db, schema.refunds_sql, order_no, false);
}

void AckBeforeCommit::acked(std::size_t payment, const std::string& order_no, Micros at, bool early) {
  if (!checked_.insert(payment).second) return;
  if (!settled_in_database(db_, schema_, order_no)) early_.push_back({order_no, at, early});
}

void AckBeforeCommit::judge(std::vector<Violation>& out) {
  for (const auto& a : early_) {
    if (!a.while_working && !settled_in_database(db_, schema_, a.order_no)) continue;
    out.emplace_back(Invariant::kAckBeforeCommit, a.order_no,
                     fmt::format("the gateway got an ack for {} at {} while no credit for it was committed",
                                 a.order_no, format_time(a.at)));
  }
}

}  // namespace twice::check
