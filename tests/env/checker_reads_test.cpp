// CachedConnection::query_each (the checker's oracle queries at quiescence,
// inside one read transaction) answers each query as query() alone does,
// a failing one included, and leaves the connection as it found it.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "env/cached_connection.h"
#include "env/sqlite_db.h"

namespace twice::env {
namespace {

std::string text_of(const Result& r) {
  std::string out = r.status.to_string() + "|";
  for (const auto& c : r.columns) out += c + ",";
  for (const auto& row : r.rows) {
    out += "\n";
    for (const auto& v : row) out += v.to_sql() + ",";
  }
  return out;
}

class CheckerReads : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fresh_database_path();
    db_ = std::make_unique<CachedConnection>(path_);
    ASSERT_TRUE(db_->exec_script("CREATE TABLE ledger (order_no TEXT, amount INTEGER);"
                                 "INSERT INTO ledger VALUES ('O-1', 100), ('O-1', 100), ('O-2', -5);"
                                 "CREATE TABLE orders (order_no TEXT PRIMARY KEY, status TEXT);"
                                 "INSERT INTO orders VALUES ('O-1', 'PAID'), ('O-2', 'WAIT_PAY');")
                    .ok());
  }
  void TearDown() override {
    db_.reset();
    remove_database(path_);
  }
  const std::vector<std::string> queries_ = {
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount > 0 GROUP BY order_no ORDER BY order_no",
      "SELECT order_no FROM no_such_table",  // a Schema's mistake: an error, and the others still answer
      "SELECT order_no, status FROM orders ORDER BY order_no",
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount < 0 GROUP BY order_no ORDER BY order_no",
  };
  std::string path_;
  std::unique_ptr<CachedConnection> db_;
};

TEST_F(CheckerReads, TogetherAnswerAsAlone) {
  std::vector<std::string> alone;
  for (const auto& sql : queries_) alone.push_back(text_of(db_->query(sql)));
  const std::vector<Result> together = db_->query_each(queries_);
  ASSERT_EQ(together.size(), queries_.size());
  for (std::size_t i = 0; i < queries_.size(); ++i) EXPECT_EQ(text_of(together[i]), alone[i]) << queries_[i];
  EXPECT_FALSE(together[1].ok());
  // The read transaction is over: the connection may serve the next run.
  EXPECT_TRUE(db_->reusable());
}

TEST_F(CheckerReads, AnOpenTransactionIsLeftOpen) {
  ASSERT_TRUE(db_->query("BEGIN").ok());
  ASSERT_TRUE(db_->query("INSERT INTO orders VALUES ('O-3', 'WAIT_PAY')").ok());
  const std::vector<Result> together = db_->query_each(queries_);
  EXPECT_EQ(together[2].rows.size(), 3u);  // sees its own transaction's row
  EXPECT_FALSE(db_->reusable());           // still in the caller's transaction
  ASSERT_TRUE(db_->query("ROLLBACK").ok());
  EXPECT_EQ(db_->query(queries_[2]).rows.size(), 2u);
}

}  // namespace
}  // namespace twice::env
