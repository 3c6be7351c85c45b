// Facts: everything the invariants judged at quiescence look at, read once
// per run: per order, the gateway's own ledger (what it settled, refunded,
// closed, and whether it got an ack) beside what the database's oracle
// queries (Schema) return. A failed oracle query becomes an oracle_error
// violation, never a silent empty answer.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/violation.h"
#include "env/raw_connection.h"
#include "gateway/gateway.h"
#include "services/services.h"
#include "twice/schema.h"

namespace twice::check {

struct CheckOptions {
  bool payload_required = false;
  // Effects every paid, kept order must cause exactly once (Scenario::required_effects).
  std::vector<std::string> required_effects;
  // What the run's external services applied (the harness's record); nullptr: none.
  const std::vector<services::AppliedEffect>* effects = nullptr;
};

struct AccountState {
  std::string user;
  std::int64_t balance = 0;     // what the accounts table holds
  std::int64_t ledger_sum = 0;  // the sum of this user's credits in the ledger
  std::int64_t should_be = 0;   // each payment the gateway settled and that was not refunded, once
};

struct OrderFacts {
  std::string order_no;
  const gateway::PaymentRecord* first = nullptr;  // its first payment, as the scenario made it
  // The gateway's ledger, over the order's payments:
  int settled = 0;
  bool acked = false;
  bool gateway_refunded = false;
  bool gateway_closed = false;  // of the first payment
  // The database:
  int credits = 0;
  // Each of its rows in credits_sql when it has several: where the count was
  // kept (the optional third column; empty without one), and the count.
  std::vector<std::pair<std::string, int>> credit_rows;
  int reversals = 0;
  bool refund_flagged = false;
  std::optional<std::string> status;
  bool payload_stored = false;
  // Observed during the run: an invalid notify for it committed a change.
  bool accepted_invalid = false;
};

struct Transition {
  std::string order_no, from, to;
};

struct Facts {
  const Schema* schema = nullptr;
  CheckOptions options;
  std::vector<OrderFacts> orders;  // in the order the gateway lists its payments
  std::vector<Transition> transitions;
  std::vector<AccountState> accounts;
  std::map<std::string, int> credits_per_order;
  std::map<std::string, std::vector<std::pair<std::string, int>>> credit_rows;  // order -> (source, count)
  std::set<std::string> refunded;  // flagged for refund
  std::vector<Violation> oracle_errors;
};

// Reads the facts of a run at quiescence. `accepted_invalid` names the orders
// an invalid notify changed (observed during the run).
Facts read_facts(env::RawConnection& db, const Schema& schema, const std::vector<gateway::PaymentRecord>& payments,
                 const std::set<std::string>& accepted_invalid, const CheckOptions& options);

}  // namespace twice::check
