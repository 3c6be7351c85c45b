// seed_database(): the database a run starts from: the handler's schema,
// every order waiting for payment, every user's account once, at zero.
// Written once for simulate(), stress mode and the benchmarks, so the three
// start from the same state. Runs outside any scheduling, on one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "twice/schema.h"
#include "twice/status.h"

namespace twice::env {

struct SeedOrder {
  std::string order_no;
  std::string user;
  std::int64_t amount = 0;
  std::string currency;
};

// Runs Schema::setup_sql, then insert_order_sql per order and
// insert_account_sql per distinct user (in the orders' order), in one
// transaction. A failure says what failed: "the handler's schema: ...",
// "seeding order O-1: ...", "seeding account alice: ...".
Status seed_database(sqlite3* conn, const Schema& schema, const std::vector<SeedOrder>& orders);

}  // namespace twice::env
