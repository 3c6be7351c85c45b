// Checker: the exactly-once verdict of a run, read after quiescence from the
// database (through the handler's Schema oracle queries) and the gateway's own
// ledger. It never trusts what the handler replied: a handler that says
// "success" and credited nothing, or credited twice, is judged by what the
// database holds. Two invariants are observed during the run and handed in:
// ack_before_commit (at each ack) and accepted_invalid (per invalid delivery).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "check/violation.h"
#include "engine/raw_connection.h"
#include "gateway/gateway.h"
#include "twice/schema.h"

namespace twice::check {

struct AccountState {
  std::string user;
  std::int64_t balance = 0;     // what the accounts table holds
  std::int64_t ledger_sum = 0;  // the sum of this user's credits in the ledger
  std::int64_t should_be = 0;   // each payment the gateway settled and that was not refunded, once
};

struct Verdict {
  std::vector<Violation> violations;
  std::vector<AccountState> accounts;
  std::map<std::string, int> credits_per_order;
  std::set<std::string> refunded;
};

struct CheckOptions {
  bool payload_required = false;
};

// True when `order_no` has a committed credit or refund flag now. For the
// ack_before_commit check, run on the scheduler thread between steps.
bool settled_in_database(engine::RawConnection& conn, const Schema& schema, const std::string& order_no);

// Reads the database (on any engine) through `schema`'s oracle queries. `observed` holds the
// violations seen during the run (ack_before_commit, accepted_invalid).
Verdict check_run(engine::RawConnection& conn, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                  const std::vector<std::string>& stuck, const std::vector<Violation>& observed = {},
                  const CheckOptions& options = {});

}  // namespace twice::check
