// Checker: the exactly-once verdict of a run, read after quiescence from the
// database (through the oracle queries) and the gateway's own ledger. It never
// trusts what the handler replied: a handler that says "success" and credited
// nothing, or credited twice, is judged by what the database holds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "check/violation.h"
#include "gateway/gateway.h"
#include "twice/schema.h"

namespace twice::check {

struct AccountState {
  std::string user;
  std::int64_t balance = 0;     // what the accounts table holds
  std::int64_t ledger_sum = 0;  // the sum of this user's credits in the ledger
  std::int64_t should_be = 0;   // each payment the gateway settled and that was credited or acked, once
};

struct Verdict {
  std::vector<Violation> violations;
  std::vector<AccountState> accounts;
  std::map<std::string, int> credits_per_order;
};

// Reads the database through `schema`'s oracle queries.
Verdict check_run(sqlite3* conn, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                  const std::vector<std::string>& stuck);

}  // namespace twice::check
