// What SQLite itself answers when two connections contend for one database
// file in rollback-journal mode (as twice runs it): no harness, two real
// connections, and a busy handler that counts its calls and gives up at once
// (so nothing depends on how long anything takes). The SQLite Db of twice is
// held to these answers (env/sqlite_db.h).
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "../unique_temp_dir.h"

namespace {

struct Connection {
  sqlite3* db = nullptr;
  int busy_calls = 0;  // how often SQLite asked whether to wait

  explicit Connection(const std::string& path) {
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA journal_mode=MEMORY;", nullptr, nullptr, nullptr);
    sqlite3_busy_handler(
        db,
        [](void* self, int) {
          ++static_cast<Connection*>(self)->busy_calls;
          return 0;  // do not wait: SQLITE_BUSY now
        },
        this);
  }
  ~Connection() { sqlite3_close(db); }
  int exec(const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }
  bool in_transaction() const { return sqlite3_get_autocommit(db) == 0; }
};

struct TwoConnections : ::testing::Test {
  std::string path;
  void SetUp() override {
    const auto dir = twice::testing::unique_temp_dir() / "sqlite-locking";
    std::filesystem::create_directories(dir);
    path = (dir / (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".db")).string();
    std::filesystem::remove(path);
    Connection setup(path);
    ASSERT_EQ(setup.exec("CREATE TABLE orders(no TEXT PRIMARY KEY, status TEXT);"
                         "INSERT INTO orders VALUES ('O-1', 'WAIT_PAY');"),
              SQLITE_OK);
  }
};

// A deferred transaction that has read (it holds a read lock) and then tries
// to write while another holds the write lock gets SQLITE_BUSY at once: SQLite
// does not call the busy handler, since waiting could only deadlock (the
// other's COMMIT waits for this reader). Its transaction stays open.
TEST_F(TwoConnections, AReaderThatTriesToWriteWhileAnotherWritesIsBusyAtOnce) {
  Connection reader(path), writer(path);
  ASSERT_EQ(reader.exec("BEGIN DEFERRED; SELECT status FROM orders;"), SQLITE_OK);
  ASSERT_EQ(writer.exec("BEGIN DEFERRED; UPDATE orders SET status = 'PAID';"), SQLITE_OK);
  EXPECT_EQ(reader.exec("UPDATE orders SET status = 'PAID';"), SQLITE_BUSY);
  EXPECT_EQ(reader.busy_calls, 0);
  EXPECT_TRUE(reader.in_transaction());
  EXPECT_EQ(sqlite3_txn_state(reader.db, nullptr), SQLITE_TXN_READ);
}

// A transaction that has not read yet (it holds no lock) and tries to write
// while another holds the write lock waits: SQLite calls the busy handler.
// The same for BEGIN IMMEDIATE.
TEST_F(TwoConnections, AWriterThatHoldsNoLockWaitsForTheWriteLock) {
  Connection first(path), second(path), third(path);
  ASSERT_EQ(first.exec("BEGIN DEFERRED; UPDATE orders SET status = 'PAID';"), SQLITE_OK);
  EXPECT_EQ(second.exec("BEGIN DEFERRED; UPDATE orders SET status = 'CLOSED';"), SQLITE_BUSY);
  EXPECT_GE(second.busy_calls, 1);
  EXPECT_EQ(third.exec("BEGIN IMMEDIATE;"), SQLITE_BUSY);
  EXPECT_GE(third.busy_calls, 1);
}

// A COMMIT that waits for a reader to let go calls the busy handler, and when
// it gives up with SQLITE_BUSY its transaction stays open: once the reader is
// gone, the same COMMIT succeeds.
TEST_F(TwoConnections, ACommitThatWaitsForAReaderKeepsItsTransactionOpen) {
  Connection reader(path), writer(path);
  ASSERT_EQ(reader.exec("BEGIN DEFERRED; SELECT status FROM orders;"), SQLITE_OK);
  ASSERT_EQ(writer.exec("BEGIN DEFERRED; UPDATE orders SET status = 'PAID';"), SQLITE_OK);
  EXPECT_EQ(writer.exec("COMMIT;"), SQLITE_BUSY);
  EXPECT_GE(writer.busy_calls, 1);
  EXPECT_TRUE(writer.in_transaction());
  // The reader, now the one to give way, may still not write:
  EXPECT_EQ(reader.exec("UPDATE orders SET status = 'CLOSED';"), SQLITE_BUSY);
  EXPECT_EQ(reader.busy_calls, 0);
  ASSERT_EQ(reader.exec("ROLLBACK;"), SQLITE_OK);
  EXPECT_EQ(writer.exec("COMMIT;"), SQLITE_OK);
  EXPECT_FALSE(writer.in_transaction());
}

}  // namespace
