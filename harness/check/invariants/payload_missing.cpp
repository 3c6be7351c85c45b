// payload_missing: a credited payment whose raw callback payload was not
// stored, in scenarios that require an audit trail.
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_payload_missing(const Facts& facts, Findings& out) {
  if (!facts.options.payload_required || facts.schema->payloads_sql.empty()) return;
  for (const auto& o : facts.orders)
    if (o.credits > 0 && !o.payload_stored)
      out.emplace_back(Invariant::kPayloadMissing, o.order_no,
                       fmt::format("order {} was credited but its callback payload was not stored", o.order_no));
}

}  // namespace twice::check
