#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../unique_temp_dir.h"
#include "env/seeded_database.h"
#include "env/sqlite_db.h"
#include "sim/scheduler.h"

namespace twice::env {
namespace {

// A scheduler and a shared in-memory database with one table, for Db tests.
class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = fresh_database_path();
    keeper_ = open_database(name_);
    ASSERT_EQ(exec_script(keeper_, "CREATE TABLE t(k TEXT PRIMARY KEY, v INTEGER NOT NULL);"), "");
  }
  void TearDown() override {
    sqlite3_close(keeper_);
    remove_database(name_);
  }

  // Runs each body as its own task, each with its own connection.
  void run_tasks(std::vector<std::function<void(Db&)>> bodies, std::vector<std::uint64_t> choices = {},
                 sim::StrategySpec strategy = {}) {
    sim::Choices c(choices);
    sim::Trace trace;
    ConnectionPool pool(name_);
    sim::Scheduler s(strategy, c, trace, sim::SchedulerLimits{});
    for (auto& body : bodies)
      s.spawn("task", 0, [this, &s, &pool, body] {
        SqliteDb db(s, pool);
        body(db);
      });
    s.run();
    trace_ = sim::format_trace(trace);
  }

  std::string name_;
  sqlite3* keeper_ = nullptr;
  std::string trace_;
};

TEST_F(DbTest, StatementsReturnRowsColumnsAndChanges) {
  run_tasks({[](Db& db) {
    Result ins = db.exec("INSERT INTO t(k, v) VALUES (?, ?), (?, ?)", {"a", 1, "b", 2});
    ASSERT_TRUE(ins.ok()) << ins.status.to_string();
    EXPECT_EQ(ins.changes, 2);
    Result sel = db.exec("SELECT k, v FROM t ORDER BY k");
    ASSERT_EQ(sel.rows.size(), 2u);
    EXPECT_EQ(sel.at(1, "k").as_text(), "b");
    EXPECT_EQ(sel.at(1, "v").as_int(), 2);
    EXPECT_TRUE(sel.at(5, "k").is_null());
  }});
  EXPECT_NE(trace_.find("INSERT INTO t(k, v) VALUES ('a', 1), ('b', 2) -> 2 rows changed"), std::string::npos) << trace_;
}

TEST_F(DbTest, ConstraintViolationIsAValueTheHandlerCanTest) {
  run_tasks({[](Db& db) {
    ASSERT_TRUE(db.exec("INSERT INTO t VALUES ('a', 1)").ok());
    Result dup = db.exec("INSERT INTO t VALUES ('a', 2)");
    EXPECT_TRUE(dup.status.is_constraint()) << dup.status.to_string();
    Result bad = db.exec("SELEKT 1");
    EXPECT_EQ(bad.status.code(), Status::Code::kError);
  }});
}

TEST_F(DbTest, TransactionRollsBackUnlessCommitted) {
  run_tasks({[](Db& db) {
    {
      auto tx = db.begin(TxMode::kImmediate);
      ASSERT_TRUE(tx.ok());
      db.exec("INSERT INTO t VALUES ('gone', 1)");
    }  // destroyed without commit
    {
      auto tx = db.begin();
      db.exec("INSERT INTO t VALUES ('kept', 1)");
      EXPECT_TRUE(tx.commit().ok());
    }
    Result r = db.exec("SELECT k FROM t");
    ASSERT_EQ(r.rows.size(), 1u);
    EXPECT_EQ(r.rows[0][0].as_text(), "kept");
  }});
}

TEST_F(DbTest, BusyWriterWaitsForTheOtherTransactionInsteadOfFailing) {
  // Both take BEGIN IMMEDIATE; whichever comes second waits, then succeeds.
  std::vector<Status> commits;
  auto body = [&commits](Db& db) {
    auto tx = db.begin(TxMode::kImmediate);
    ASSERT_TRUE(tx.ok()) << tx.status().to_string();
    Result r = db.exec("SELECT COUNT(*) FROM t");
    db.exec("INSERT INTO t VALUES (?, 1)", {std::to_string(r.rows[0][0].as_int())});
    commits.push_back(tx.commit());
  };
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    sqlite3_exec(keeper_, "DELETE FROM t", nullptr, nullptr, nullptr);
    commits.clear();
    sim::Choices c(seed);
    std::vector<std::uint64_t> drawn;
    for (int i = 0; i < 40; ++i) drawn.push_back(c.draw(2));
    run_tasks({body, body}, drawn);
    ASSERT_EQ(commits.size(), 2u);
    EXPECT_TRUE(commits[0].ok() && commits[1].ok());
    // Serialised: the second saw the first's row, so the keys are 0 and 1.
    EXPECT_EQ(query(keeper_, "SELECT group_concat(k) FROM (SELECT k FROM t ORDER BY k)").rows[0][0].as_text(), "0,1");
  }
}

TEST_F(DbTest, TheSecondWriterIsRefusedAndTheCommitWaitsForItsReadLock) {
  // Deferred transactions that read, then write: each holds SHARED and wants
  // to write. SQLite refuses the second writer at once; the first one's
  // COMMIT then waits until the refused one lets go of its read lock, and
  // runs in the step that resumes it (no retry in between).
  std::vector<std::string> outcomes;
  auto body = [&outcomes](const std::string& key) {
    return [&outcomes, key](Db& db) {
      auto tx = db.begin(TxMode::kDeferred);
      db.exec("SELECT COUNT(*) FROM t");
      Result w = db.exec("INSERT INTO t VALUES (?, 1)", {key});
      if (!w.ok()) {
        outcomes.push_back(key + " insert " + w.status.to_string());
        return;
      }
      outcomes.push_back(key + " commit " + tx.commit().to_string());
    };
  };
  // Both read before either writes: T1 starts, BEGINs, reads; T2 the same; T1
  // writes; T2 writes (refused); T1 commits (waits); T2 rolls back.
  sim::StrategySpec script{sim::StrategyKind::kScripted, 2, 200, {1, 1, 1, 2, 2, 2, 1, 2, 1, 2}, {}};
  run_tasks({body("a"), body("b")}, {}, script);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"b insert SQLITE_BUSY: database is locked", "a commit OK"})) << trace_;
  // The wait names whose lock it waits for: T2's read lock.
  EXPECT_NE(trace_.find("T1   sql   COMMIT -> SQLITE_BUSY, waits for the lock T2 holds\n"
                        "[      0.010s] T2   sql   ROLLBACK -> ok\n"
                        "[      0.011s] T1   sql   COMMIT -> ok\n"),
            std::string::npos)
      << trace_;
  EXPECT_EQ(query(keeper_, "SELECT COUNT(*) FROM t").rows[0][0].as_int(), 1) << "the refused one's transaction rolled back";
}

// Two deferred transactions that read, then write, then commit, over many
// schedules: how often the one SQLITE_BUSY lands on a COMMIT.
struct BusyOutcomes {
  int inserts_busy = 0;
  int commits_busy = 0;
  int commits_ok = 0;
};

BusyOutcomes read_then_write_race(const std::function<void(std::vector<std::function<void(Db&)>>,
                                                           std::vector<std::uint64_t>)>& run,
                                  sqlite3* keeper) {
  BusyOutcomes out;
  auto body = [&out](const std::string& key) {
    return [&out, key](Db& db) {
      auto tx = db.begin(TxMode::kDeferred);
      db.exec("SELECT COUNT(*) FROM t");
      if (!db.exec("INSERT INTO t VALUES (?, 1)", {key}).ok()) {
        ++out.inserts_busy;
        return;  // the transaction rolls back
      }
      const Status committed = tx.commit();
      committed.ok() ? ++out.commits_ok : ++out.commits_busy;
    };
  };
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    sqlite3_exec(keeper, "DELETE FROM t", nullptr, nullptr, nullptr);
    sim::Choices c(seed);
    std::vector<std::uint64_t> drawn;
    for (int i = 0; i < 40; ++i) drawn.push_back(c.draw(2));
    run({body("a"), body("b")}, drawn);
  }
  return out;
}

// With SQLite's own answers (tests/env/sqlite_locking_test.cpp), the reader
// that tries to write second gets SQLITE_BUSY at once, and the COMMIT of the
// one that wrote first waits for it to let go and goes through: a COMMIT is
// never the one refused. (The rule before it, wait and then draw a victim,
// refused a COMMIT in some of these schedules; it is gone.)
TEST_F(DbTest, AsSqliteTheSecondWriterIsBusyAtOnceAndNoCommitIsRefused) {
  auto run = [this](std::vector<std::function<void(Db&)>> bodies, std::vector<std::uint64_t> choices) {
    run_tasks(std::move(bodies), std::move(choices));
  };
  const BusyOutcomes as_sqlite = read_then_write_race(run, keeper_);
  EXPECT_EQ(as_sqlite.commits_busy, 0);
  EXPECT_EQ(as_sqlite.commits_ok + as_sqlite.inserts_busy, 120);  // two tasks a schedule, each one or the other
  EXPECT_GT(as_sqlite.inserts_busy, 0);

  // One schedule, read in its trace: both read, T1 writes, T2's write is refused at once.
  sqlite3_exec(keeper_, "DELETE FROM t", nullptr, nullptr, nullptr);
  std::vector<std::string> outcomes;
  auto body = [&outcomes](const std::string& key) {
    return [&outcomes, key](Db& db) {
      auto tx = db.begin(TxMode::kDeferred);
      db.exec("SELECT COUNT(*) FROM t");
      Result w = db.exec("INSERT INTO t VALUES (?, 1)", {key});
      if (!w.ok()) {
        outcomes.push_back(key + " insert " + w.status.to_string());
        return;
      }
      outcomes.push_back(key + " commit " + tx.commit().to_string());
    };
  };
  sim::StrategySpec script{sim::StrategyKind::kScripted, 2, 200, {1, 1, 1, 2, 2, 2, 1, 2}, {}};
  run_tasks({body("a"), body("b")}, {}, script);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"b insert SQLITE_BUSY: database is locked", "a commit OK"})) << trace_;
  EXPECT_NE(trace_.find("T2   sql   INSERT INTO t VALUES ('b', 1) -> SQLITE_BUSY at once: this transaction holds a "
                        "read lock and T1 the write lock"),
            std::string::npos)
      << trace_;
}

// A run's database is a copy of the first one seeded for the same key: the
// seed runs once, and each copy reads as the seeded database did.
TEST(SeededDatabase, SeedsOncePerKeyAndEachCopyHoldsTheSeed) {
  const std::string key = "db_test: one table, two rows";
  int seeded = 0;
  auto seed = [&seeded](sqlite3* conn) {
    ++seeded;
    ASSERT_EQ(exec_script(conn, "CREATE TABLE t(k TEXT PRIMARY KEY, v INTEGER); INSERT INTO t VALUES ('a', 1), ('b', 2);"),
              "");
  };
  for (int copy = 0; copy < 2; ++copy) {
    const std::string path = fresh_database_path();
    create_seeded_database(path, key, seed);
    sqlite3* conn = open_database(path);
    const Result r = query(conn, "SELECT k, v FROM t ORDER BY k");
    ASSERT_EQ(r.rows.size(), 2u) << "copy " << copy;
    EXPECT_EQ(r.rows[1][0].as_text(), "b");
    EXPECT_TRUE(query(conn, "INSERT INTO t VALUES ('c', 3)").ok()) << "a copy is writable";
    sqlite3_close(conn);
    remove_database(path);
  }
  EXPECT_EQ(seeded, 1);
}

TEST(SeededDatabase, AFailingSeedLeavesNoFileAndIsTriedAgain) {
  const std::string key = "db_test: a schema that fails";
  int tries = 0;
  auto seed = [&tries](sqlite3*) {
    ++tries;
    throw std::runtime_error("the handler's schema: syntax error");
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string path = fresh_database_path();
    EXPECT_THROW(create_seeded_database(path, key, seed), std::runtime_error);
    EXPECT_FALSE(std::filesystem::exists(path));
  }
  EXPECT_EQ(tries, 2);
}

TEST(RunDatabase, AStaleFileOfADeadProcessWithTheSamePidNeverCollides) {
  const auto dir = testing::unique_temp_dir() / "db-name";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ::setenv("TWICE_DB_DIR", dir.c_str(), 1);
  // What a process with this pid left when it died, under the old name and the new.
  const std::string pid = std::to_string(::getpid());
  for (const std::string& stale : {"twice-" + pid + "-0.db", "twice-" + pid + "-0123456789abcdef-0.db"})
    std::ofstream(dir / stale) << "stale";
  const std::string a = fresh_database_path();
  const std::string b = fresh_database_path();
  EXPECT_NE(a, b);
  EXPECT_TRUE(std::filesystem::path(a).filename().string().starts_with("twice-" + pid + "-")) << a;
  EXPECT_FALSE(std::filesystem::exists(a));
  sqlite3* conn = open_database(a);  // and it opens as an empty database, not the stale bytes
  EXPECT_TRUE(query(conn, "CREATE TABLE t (x)").ok());
  sqlite3_close(conn);
  // The parent of a dead child removes everything of that pid, and nothing else.
  std::ofstream(dir / "twice-1-0123456789abcdef-0.db") << "another process";
  remove_process_databases(::getpid());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  EXPECT_TRUE(std::filesystem::exists(dir / "twice-1-0123456789abcdef-0.db"));
  ::unsetenv("TWICE_DB_DIR");
  std::filesystem::remove_all(dir);
}

TEST(RunDatabase, AnAuthorizerKeepsStatementsInsideTheDatabase) {
  const auto dir = testing::unique_temp_dir() / "confine";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  sqlite3* conn = open_database((dir / "run.db").string());
  const Result attach = query(conn, "ATTACH DATABASE ? AS elsewhere", {(dir / "other.db").string()});
  EXPECT_NE(attach.status.to_string().find("not authorized (twice denies ATTACH"), std::string::npos)
      << attach.status.to_string();
  EXPECT_FALSE(std::filesystem::exists(dir / "other.db"));
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA locking_mode=EXCLUSIVE", "PRAGMA synchronous=FULL"})
    EXPECT_FALSE(query(conn, pragma).ok()) << pragma;
  EXPECT_TRUE(query(conn, "PRAGMA journal_mode").ok());  // reading it stays allowed
  EXPECT_TRUE(query(conn, "PRAGMA foreign_keys=ON").ok());
  EXPECT_EQ(query(conn, "").status.to_string(), Status::error(kNoStatement).to_string());
  sqlite3_close(conn);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace twice::env

namespace twice {
namespace {

// A process of twice killed outright leaves its database files; the next
// process sweeps those whose pid is dead, at its first database, and leaves a
// living process's alone. (A fresh process: a forked one inherits its
// parent's sweep.)
TEST(DatabaseFiles, AKilledProcesssFilesAreSweptByTheNextProcessAndALiveOnesAreKept) {
  const auto folder = testing::unique_temp_dir() / "sweep";  // the process's folder stays: later tests write there
  std::filesystem::create_directories(folder);
  const pid_t gone = ::fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);  // `gone` names no process now
  const auto dead_file = folder / fmt::format("twice-{}-00000000000000aa-0.db", gone);
  const auto live_file = folder / fmt::format("twice-{}-00000000000000bb-0.db", ::getpid());
  const auto other_file = folder / "twice-notapid-0.db";
  for (const auto& f : {dead_file, live_file, other_file}) std::ofstream(f) << "x";

  // The next process: a `twice replay`, whose run opens its first database there.
  const std::string command = fmt::format(
      "TWICE_DB_DIR='{}' '{}' replay --handler cas --scenario sequential-duplicates --seed 1 "
      "--scenarios-dir '{}/scenarios' >/dev/null 2>&1",
      folder.string(), TWICE_BINARY, TWICE_SOURCE_DIR);
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_FALSE(std::filesystem::exists(dead_file));
  EXPECT_TRUE(std::filesystem::exists(live_file));
  EXPECT_TRUE(std::filesystem::exists(other_file));
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace twice
