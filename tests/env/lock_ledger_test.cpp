// The lock ledger (env/lock_ledger.h) against SQLite itself: connections of
// one process on one run's file, no scheduler. What the ledger says a
// connection holds, and whether a refused lock could be granted, must be what
// SQLite then does.
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "env/lock_ledger.h"
#include "env/sqlite_db.h"
#include "tests/env/sqlite_rows.h"

namespace twice::env {
namespace {

struct LedgerTest : ::testing::Test {
  std::string path;
  std::vector<sqlite3*> conns;

  void SetUp() override {
    path = fresh_database_path();
    sqlite3* setup = open_database(path);
    ASSERT_EQ(exec_script(setup, "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER);"), "");
    sqlite3_close(setup);
  }
  void TearDown() override {
    for (sqlite3* c : conns) sqlite3_close(c);
    remove_database(path);
  }
  sqlite3* connect() {
    conns.push_back(open_database(path));
    return conns.back();
  }
  static int run(sqlite3* c, const char* sql) { return sqlite3_exec(c, sql, nullptr, nullptr, nullptr) & 0xff; }
};

TEST_F(LedgerTest, AWriterWaitsForTheWriteLockUntilItIsReleased) {
  sqlite3* a = connect();
  sqlite3* b = connect();
  ASSERT_EQ(run(a, "BEGIN IMMEDIATE"), SQLITE_OK);
  EXPECT_EQ(held_lock(a), SQLITE_LOCK_RESERVED);
  ASSERT_EQ(run(b, "BEGIN IMMEDIATE"), SQLITE_BUSY);
  EXPECT_EQ(held_lock(b), SQLITE_LOCK_NONE) << "a refused BEGIN IMMEDIATE lets go of its read lock";
  std::optional<RefusedLock> refused = RefusedLock::take(b);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->level(), SQLITE_LOCK_RESERVED);
  EXPECT_FALSE(RefusedLock::take(b)) << "taken once";
  EXPECT_FALSE(refused->grantable());
  ASSERT_EQ(run(a, "INSERT INTO t VALUES (1, 1)"), SQLITE_OK);
  EXPECT_FALSE(refused->grantable());
  ASSERT_EQ(run(a, "COMMIT"), SQLITE_OK);
  EXPECT_EQ(held_lock(a), SQLITE_LOCK_NONE);
  EXPECT_TRUE(refused->grantable());
  EXPECT_EQ(run(b, "BEGIN IMMEDIATE"), SQLITE_OK);
  EXPECT_EQ(run(b, "COMMIT"), SQLITE_OK);
}

TEST_F(LedgerTest, ACommitKeepsPendingAndWaitsForTheReaders) {
  sqlite3* writer = connect();
  sqlite3* reader = connect();
  sqlite3* late = connect();
  ASSERT_EQ(run(writer, "BEGIN; INSERT INTO t VALUES (1, 1)"), SQLITE_OK);
  ASSERT_EQ(run(reader, "BEGIN; SELECT * FROM t"), SQLITE_OK);
  EXPECT_EQ(held_lock(reader), SQLITE_LOCK_SHARED);
  ASSERT_EQ(run(writer, "COMMIT"), SQLITE_BUSY);
  EXPECT_EQ(held_lock(writer), SQLITE_LOCK_PENDING);
  std::optional<RefusedLock> commit = RefusedLock::take(writer);
  ASSERT_TRUE(commit);
  EXPECT_EQ(commit->level(), SQLITE_LOCK_EXCLUSIVE);
  EXPECT_FALSE(commit->grantable());
  // PENDING keeps new readers out.
  ASSERT_EQ(run(late, "SELECT * FROM t"), SQLITE_BUSY);
  std::optional<RefusedLock> read = RefusedLock::take(late);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->level(), SQLITE_LOCK_SHARED);
  EXPECT_FALSE(read->grantable());
  ASSERT_EQ(run(reader, "COMMIT"), SQLITE_OK);
  EXPECT_TRUE(commit->grantable());
  EXPECT_FALSE(read->grantable()) << "the writer still holds PENDING";
  ASSERT_EQ(run(writer, "COMMIT"), SQLITE_OK);
  EXPECT_TRUE(read->grantable());
  EXPECT_EQ(run(late, "SELECT * FROM t"), SQLITE_OK);
}

// Random statements on four connections: after every refusal, before the
// refused statement is retried, grantable() must say what the retry meets:
// true, and the lock it was refused is granted (the statement may still meet
// another lock later: an autocommit write refused SHARED can next be refused
// RESERVED); false, and it is refused that lock again.
TEST_F(LedgerTest, GrantableSaysWhatARetryMeets) {
  const std::vector<const char*> statements = {
      "BEGIN",  "BEGIN IMMEDIATE", "SELECT * FROM t", "INSERT OR REPLACE INTO t VALUES (1, 2)",
      "COMMIT", "ROLLBACK",        "UPDATE t SET v = v + 1",
  };
  for (int i = 0; i < 4; ++i) connect();
  std::mt19937 rng(7);
  struct Waiting {
    int statement = -1;
    std::optional<RefusedLock> lock;
  };
  std::vector<Waiting> waiting(conns.size());
  int checked_true = 0, checked_false = 0;
  for (int step = 0; step < 4000; ++step) {
    const std::size_t c = rng() % conns.size();
    Waiting& w = waiting[c];
    int statement = w.statement >= 0 ? w.statement : static_cast<int>(rng() % statements.size());
    bool expect_granted = false;
    int refused_level = 0;
    const bool retry = w.statement >= 0 && w.lock;
    if (retry) {
      expect_granted = w.lock->grantable();
      refused_level = w.lock->level();
    }
    const int rc = run(conns[c], statements[static_cast<std::size_t>(statement)]);
    std::optional<RefusedLock> now = rc == SQLITE_BUSY ? RefusedLock::take(conns[c]) : std::nullopt;
    if (retry) {
      if (expect_granted) {
        ++checked_true;
        EXPECT_TRUE(rc != SQLITE_BUSY || (now && now->level() > refused_level))
            << "step " << step << ": " << statements[static_cast<std::size_t>(statement)] << " was refused again at "
            << (now ? now->level() : -1);
      } else {
        ++checked_false;
        EXPECT_EQ(rc, SQLITE_BUSY) << "step " << step << ": " << statements[static_cast<std::size_t>(statement)];
      }
    }
    // A refused statement that SQLite would have waited for is retried; one
    // refused while its transaction reads (SQLite answers at once) is left.
    if (rc == SQLITE_BUSY && sqlite3_txn_state(conns[c], nullptr) != SQLITE_TXN_READ && now) {
      w.statement = statement;
      w.lock = now;
    } else {
      w.statement = -1;
      w.lock.reset();
    }
    if (rng() % 20 == 0 && !retry) {  // now and then everyone lets go, so that the walk goes on
      for (std::size_t k = 0; k < conns.size(); ++k) {
        run(conns[k], "ROLLBACK");
        waiting[k] = {};
      }
    }
  }
  EXPECT_GT(checked_true, 100);
  EXPECT_GT(checked_false, 100);
}

// The ledger answers every lock call itself (unix's fcntl is never asked):
// the same random statements on four connections of a twice-unix file and of
// a plain unix one (SQLite's own locking, the kernel's fcntl under it) must
// get the same answer, statement by statement, and read the same rows.
TEST_F(LedgerTest, EveryStatementIsAnsweredAsSqlitesUnixVfsAnswersIt) {
  const std::vector<const char*> statements = {
      "BEGIN",  "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "SELECT group_concat(k || ':' || v) FROM t",
      "INSERT OR REPLACE INTO t VALUES (1, 7)", "INSERT OR REPLACE INTO t VALUES (3, 9)", "COMMIT", "ROLLBACK",
      "UPDATE t SET v = v + 1", "DELETE FROM t WHERE k = 3",
  };
  const std::string unix_path = fresh_database_path();
  std::vector<sqlite3*> unix_conns;
  const auto open_unix = [&] {
    sqlite3* c = nullptr;
    EXPECT_EQ(sqlite3_open_v2(unix_path.c_str(), &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "unix"), SQLITE_OK);
    EXPECT_EQ(exec_script(c, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;"), "");
    unix_conns.push_back(c);
    return c;
  };
  ASSERT_EQ(exec_script(open_unix(), "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER);"), "");
  for (int i = 0; i < 3; ++i) open_unix();
  for (int i = 0; i < 4; ++i) connect();
  const auto read = [](sqlite3* c, const char* sql, int& rc) { return testing::sqlite_rows(c, sql, rc); };
  std::mt19937 rng(11);
  int busy = 0, ok = 0;
  for (int step = 0; step < 6000; ++step) {
    const std::size_t c = rng() % conns.size();
    const char* sql = statements[rng() % statements.size()];
    int rc_ledger = 0, rc_unix = 0;
    const std::string rows_ledger = read(conns[c], sql, rc_ledger);
    const std::string rows_unix = read(unix_conns[c], sql, rc_unix);
    ASSERT_EQ(rc_ledger, rc_unix) << "step " << step << ", connection " << c << ": " << sql;
    ASSERT_EQ(rows_ledger, rows_unix) << "step " << step << ", connection " << c << ": " << sql;
    ASSERT_EQ(sqlite3_txn_state(conns[c], nullptr), sqlite3_txn_state(unix_conns[c], nullptr)) << "step " << step;
    (rc_ledger == SQLITE_BUSY ? busy : ok) += 1;
    if (rng() % 25 == 0)
      for (std::size_t k = 0; k < conns.size(); ++k) {
        run(conns[k], "ROLLBACK");
        run(unix_conns[k], "ROLLBACK");
      }
  }
  for (sqlite3* c : unix_conns) sqlite3_close(c);
  remove_database(unix_path);
  EXPECT_GT(busy, 500);
  EXPECT_GT(ok, 1000);
}

}  // namespace
}  // namespace twice::env

namespace twice::env {
namespace {

// shared_grantable() is what the connection pool asks instead of reading the
// schema's page (env/sqlite_db.h, could_read_now): over a random walk of four
// connections' statements, a fifth that holds no lock is granted SHARED (its
// read succeeds) exactly when the ledger says it would be.
TEST_F(LedgerTest, SharedGrantableSaysWhatAReadMeets) {
  const std::vector<const char*> statements = {
      "BEGIN", "BEGIN IMMEDIATE", "SELECT * FROM t", "INSERT OR REPLACE INTO t VALUES (1, 2)",
      "COMMIT", "ROLLBACK", "UPDATE t SET v = v + 1",
  };
  for (int i = 0; i < 4; ++i) connect();
  sqlite3* reader = connect();
  std::mt19937 rng(11);
  int granted = 0, refused = 0;
  for (int step = 0; step < 4000; ++step) {
    const std::size_t c = rng() % (conns.size() - 1);
    (void)run(conns[c], statements[rng() % statements.size()]);
    (void)RefusedLock::take(conns[c]);
    const std::optional<bool> says = shared_grantable(reader);
    ASSERT_TRUE(says.has_value());
    const int rc = run(reader, "SELECT 1 FROM sqlite_master LIMIT 1");
    (void)RefusedLock::take(reader);
    EXPECT_EQ(*says, rc == SQLITE_OK) << "step " << step << ": the read answered " << rc;
    (*says ? granted : refused)++;
    ASSERT_EQ(held_lock(reader), SQLITE_LOCK_NONE);  // an autocommit read lets go
    if (rng() % 20 == 0)  // now and then everyone lets go, so that the walk goes on
      for (std::size_t k = 0; k + 1 < conns.size(); ++k) run(conns[k], "ROLLBACK");
  }
  EXPECT_GT(granted, 100);
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace twice::env
