#include "prepared_database.h"

#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "env/sqlite_db.h"
#include "twice/schema.h"

namespace twice::testing {

PreparedDatabase::PreparedDatabase(const std::vector<gateway::OrderSpec>& orders)
    : path_(env::fresh_database_path()), conn_(env::open_database(path_)) {
  const Schema& schema = reference_schema();
  EXPECT_EQ(env::exec_script(conn_, schema.setup_sql), "");
  std::set<std::string> users;
  for (const auto& o : orders) {
    EXPECT_TRUE(env::query(conn_, schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}).ok());
    if (users.insert(o.user).second) {
      EXPECT_TRUE(env::query(conn_, schema.insert_account_sql, {o.user}).ok());
    }
    gateway::PaymentRecord p;
    p.order = o;
    p.transaction_id = "T-" + o.order_no;
    p.settled = o.paid;
    p.acked = o.paid;
    payments_.push_back(std::move(p));
  }
}

PreparedDatabase::~PreparedDatabase() {
  sqlite3_close(conn_);
  env::remove_database(path_);
}

void PreparedDatabase::sql(const std::string& text) { EXPECT_EQ(env::exec_script(conn_, text), "") << text; }

void PreparedDatabase::credit(const std::string& order_no, const std::string& user, std::int64_t amount) {
  sql(fmt::format("INSERT INTO ledger(order_no, user_id, amount) VALUES ('{}', '{}', {});"
                  "UPDATE accounts SET balance = balance + {} WHERE user_id = '{}';",
                  order_no, user, amount, amount, user));
}

void PreparedDatabase::reverse(const std::string& order_no, const std::string& user, std::int64_t amount) {
  sql(fmt::format("INSERT INTO ledger(order_no, user_id, amount) VALUES ('{}', '{}', {});"
                  "UPDATE accounts SET balance = balance - {} WHERE user_id = '{}';",
                  order_no, user, -amount, amount, user));
}

void PreparedDatabase::set_status(const std::string& order_no, const std::string& status) {
  sql(fmt::format("UPDATE orders SET status = '{}' WHERE order_no = '{}';", status, order_no));
}

check::Verdict PreparedDatabase::check(const std::vector<check::Violation>& observed,
                                       const check::CheckOptions& options,
                                       const std::vector<std::string>& stuck) const {
  env::SqliteConnection db(conn_);
  return check::judge(db, reference_schema(), payments_, stuck, observed, options);
}

std::vector<std::string> names_of(const check::Verdict& v) {
  std::vector<std::string> out;
  for (const auto& x : v.violations) out.push_back(x.invariant);
  return out;
}

}  // namespace twice::testing
