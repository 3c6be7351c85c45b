// Checker: the exactly-once verdict of a run. It never trusts what the
// handler replied: a handler that says "success" and credited nothing, or
// credited twice, is judged by what the database holds (the Schema's oracle
// queries) against the gateway's own ledger.
//
// The invariants are units (check/invariant.h): those observed during the run
// (check/invariants/during_run.h) are handed in as violations; those judged at
// quiescence run here over the run's Facts (check/facts.h).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "check/facts.h"
#include "check/violation.h"
#include "env/raw_connection.h"
#include "gateway/gateway.h"
#include "twice/schema.h"

namespace twice::check {

struct Verdict {
  std::vector<Violation> violations;  // by invariant name; within one, in the order found
  std::vector<AccountState> accounts;
  std::map<std::string, int> credits_per_order;
  std::set<std::string> refunded;

  // The first violation of `invariant`; null when the run has none.
  const Violation* find(std::string_view invariant) const {
    for (const auto& v : violations)
      if (v.invariant == invariant) return &v;
    return nullptr;
  }
};

// Judges a run at quiescence. `observed` holds the violations seen during the
// run (ack_before_commit, accepted_invalid); `stuck` the scheduler's reasons
// for tasks it took down.
// (Named judge, not check_run: testing::check_run is the public API's.)
Verdict judge(env::RawConnection& db, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
              const std::vector<std::string>& stuck, const std::vector<Violation>& observed = {},
              const CheckOptions& options = {});

}  // namespace twice::check
