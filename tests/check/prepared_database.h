// PreparedDatabase: a run's database written by hand, for testing the checker
// at the exact boundary of each invariant without a scheduler or a handler.
// It holds the reference schema, seeded as simulate() seeds it (each order
// WAIT_PAY, each user's account at zero), and the gateway's ledger of
// payments, which a test edits as the gateway would have. One test, one
// thread; the database file is removed when it goes out of scope.
#pragma once

#include <string>
#include <vector>

#include <sqlite3.h>

#include "check/checker.h"
#include "gateway/gateway.h"

namespace twice::testing {

class PreparedDatabase {
 public:
  // One payment record per order, settled when `order.paid`.
  explicit PreparedDatabase(const std::vector<gateway::OrderSpec>& orders);
  ~PreparedDatabase();
  PreparedDatabase(const PreparedDatabase&) = delete;
  PreparedDatabase& operator=(const PreparedDatabase&) = delete;

  // Runs `sql` (no parameters); a failing statement fails the test.
  void sql(const std::string& sql);
  // What a handler does to credit an order once: a ledger row and the balance.
  void credit(const std::string& order_no, const std::string& user, std::int64_t amount);
  // What a handler does to take a refunded credit back once.
  void reverse(const std::string& order_no, const std::string& user, std::int64_t amount);
  void set_status(const std::string& order_no, const std::string& status);

  // The gateway's records, one per payment: edit them as the gateway would.
  std::vector<gateway::PaymentRecord>& payments() { return payments_; }
  sqlite3* connection() const { return conn_; }

  check::Verdict check(const std::vector<check::Violation>& observed = {}, const check::CheckOptions& options = {},
                       const std::vector<std::string>& stuck = {}) const;

 private:
  std::string path_;
  sqlite3* conn_ = nullptr;
  std::vector<gateway::PaymentRecord> payments_;
};

// The invariant names of a verdict, in its (sorted) order.
std::vector<std::string> names_of(const check::Verdict& v);

}  // namespace twice::testing
