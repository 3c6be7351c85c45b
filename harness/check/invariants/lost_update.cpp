// lost_update: an account whose balance is not the sum of the credits its
// ledger holds (a read-modify-write that overwrote another's credit, or a
// credit written to one and not the other).
#include <fmt/format.h>

#include "check/invariants/quiescent.h"

namespace twice::check {

void judge_lost_update(const Facts& facts, Findings& out) {
  for (const auto& a : facts.accounts)
    if (a.balance != a.ledger_sum)
      out.emplace_back(Invariant::kLostUpdate, a.user,
                       fmt::format("account {} holds {} but its ledger credits sum to {}", a.user, a.balance,
                                   a.ledger_sum));
}

}  // namespace twice::check
