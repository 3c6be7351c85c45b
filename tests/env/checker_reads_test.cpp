// CachedConnection::query_each (the checker's oracle queries at quiescence,
// inside one read transaction) answers each query as query() alone does,
// a failing one included, and leaves the connection as it found it; an
// answer it takes from an earlier query_committed() (the ack-time check) is
// the one a fresh connection reads, whatever other connections committed or
// rolled back in between, and after the file is rewritten as between runs.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>
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
    for (sqlite3* c : others_) sqlite3_close(c);
    db_.reset();
    remove_database(path_);
  }
  const std::vector<std::string> queries_ = {
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount > 0 GROUP BY order_no ORDER BY order_no",
      "SELECT order_no FROM no_such_table",  // a Schema's mistake: an error, and the others still answer
      "SELECT order_no, status FROM orders ORDER BY order_no",
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount < 0 GROUP BY order_no ORDER BY order_no",
  };
  // A connection open until the test ends.
  sqlite3* open_and_keep() {
    others_.push_back(open_database(path_));
    return others_.back();
  }
  std::string path_;
  std::unique_ptr<CachedConnection> db_;
  std::vector<sqlite3*> others_;
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

// A writer commits, rolls back or does nothing at random; the checker asks
// query_committed() now and then (keeping its answer), and query_each() the
// rest of the time. Every answer must be what a fresh connection reads.
TEST_F(CheckerReads, KeptAnswersAreWhatAFreshConnectionReads) {
  sqlite3* writer = open_database(path_);
  const std::vector<std::string> reads = {queries_[0], queries_[2], queries_[3]};
  const std::vector<const char*> writes = {
      "INSERT INTO ledger VALUES ('O-1', 100)", "INSERT INTO ledger VALUES ('O-3', 7)",
      "DELETE FROM ledger WHERE rowid = (SELECT MAX(rowid) FROM ledger)", "UPDATE orders SET status = 'PAID'",
      "UPDATE orders SET status = status",  // changes no value, yet commits
  };
  std::mt19937 rng(20261201);
  int kept_then_asked = 0;
  bool kept = false;
  for (int step = 0; step < 600; ++step) {
    switch (rng() % 4) {
      case 0: exec_script(writer, writes[rng() % writes.size()]); break;  // autocommit
      case 1:
        exec_script(writer, "BEGIN");
        exec_script(writer, writes[rng() % writes.size()]);
        exec_script(writer, "ROLLBACK");
        break;
      case 2:
        ASSERT_TRUE(db_->query_committed(reads[rng() % reads.size()]).ok());
        kept = true;
        break;
      default: {
        const std::vector<Result> together = db_->query_each(reads);
        sqlite3* fresh = open_database(path_);
        for (std::size_t i = 0; i < reads.size(); ++i)
          ASSERT_EQ(text_of(together[i]), text_of(query(fresh, reads[i]))) << "step " << step << ": " << reads[i];
        sqlite3_close(fresh);
        kept_then_asked += kept;
        kept = false;
      }
    }
  }
  EXPECT_GT(kept_then_asked, 50);
  sqlite3_close(writer);
}

// Between runs the file is rewritten in place with a new change counter
// (env/run_database.h); a kept answer from before must not survive it.
TEST_F(CheckerReads, AKeptAnswerDoesNotOutliveARewrite) {
  std::ifstream in(path_, std::ios::binary);
  std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string seeded = text_of(db_->query(queries_[0]));
  ASSERT_EQ(exec_script(open_and_keep(), "INSERT INTO ledger VALUES ('O-9', 1)"), "");
  const std::string kept = text_of(db_->query_committed(queries_[0]));
  ASSERT_NE(kept, seeded);
  // The seeded image written back with a change counter the file never had,
  // as RunDatabase::reset does between runs.
  ASSERT_GE(image.size(), 100u);
  for (std::size_t at : {std::size_t{24}, std::size_t{92}}) image[at] = static_cast<char>(0x40);
  const int fd = ::open(path_.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, image.data(), image.size(), 0), static_cast<ssize_t>(image.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(image.size())), 0);
  ::close(fd);
  EXPECT_EQ(text_of(db_->query_each(queries_)[0]), seeded);
}

}  // namespace
}  // namespace twice::env
