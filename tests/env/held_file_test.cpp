// A file held in memory (env/held_file.h) against the same file left to
// unix: the same statements on connections of each must give the same
// answers, and the held bytes must end as the unheld file's bytes on disk.
#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "env/held_file.h"
#include "env/run_database.h"
#include "env/sqlite_db.h"
#include "tests/env/sqlite_rows.h"

namespace twice::env {
namespace {

std::string file_bytes(const std::string& path) {
  std::string bytes;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  char buffer[4096];
  for (ssize_t n; fd >= 0 && (n = ::read(fd, buffer, sizeof buffer)) > 0;) bytes.append(buffer, static_cast<std::size_t>(n));
  if (fd >= 0) ::close(fd);
  return bytes;
}

std::string answer(sqlite3* c, const char* sql, int& rc) { return testing::sqlite_rows(c, sql, rc); }

TEST(HeldFile, StatementsAnswerAsOnTheFileAndLeaveItsBytes) {
  const std::vector<const char*> statements = {
      "BEGIN",
      "BEGIN IMMEDIATE",
      "SELECT count(*), sum(length(v)) FROM t",
      "INSERT INTO t(v) VALUES (hex(zeroblob(3000)))",  // rows over a page: the file grows
      "UPDATE t SET v = v || 'x' WHERE k % 3 = 0",
      "DELETE FROM t WHERE k % 2 = 1",
      "COMMIT",
      "ROLLBACK",
  };
  const std::string seed = "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT);";
  const std::string held_path = fresh_database_path();
  const std::string disk_path = fresh_database_path();
  {
    sqlite3* c = open_database(disk_path);
    ASSERT_EQ(exec_script(c, seed), "");
    sqlite3_close(c);
  }
  hold_in_memory(held_path, file_bytes(disk_path));
  // The disk copy of the held file: what it holds once SQLite is done with it.
  {
    const int fd = ::open(held_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  std::vector<sqlite3*> held, disk;
  for (int i = 0; i < 3; ++i) {
    held.push_back(open_database(held_path));
    disk.push_back(open_database(disk_path));
  }
  std::mt19937 rng(3);
  int busy = 0, ok = 0;
  for (int step = 0; step < 3000; ++step) {
    const std::size_t c = rng() % held.size();
    const char* sql = statements[rng() % statements.size()];
    int rc_held = 0, rc_disk = 0;
    const std::string rows_held = answer(held[c], sql, rc_held);
    const std::string rows_disk = answer(disk[c], sql, rc_disk);
    ASSERT_EQ(rc_held, rc_disk) << "step " << step << ": " << sql;
    ASSERT_EQ(rows_held, rows_disk) << "step " << step << ": " << sql;
    (rc_held == SQLITE_DONE ? ok : busy) += 1;
    if (rng() % 15 == 0)
      for (std::size_t k = 0; k < held.size(); ++k) {
        answer(held[k], "ROLLBACK", rc_held);
        answer(disk[k], "ROLLBACK", rc_disk);
      }
  }
  // Then everything deleted and the file vacuumed: it shrinks (a truncate).
  for (std::size_t k = 0; k < held.size(); ++k) {
    int rc_held = 0, rc_disk = 0;
    answer(held[k], "ROLLBACK", rc_held);
    answer(disk[k], "ROLLBACK", rc_disk);
  }
  const std::size_t before = held_in_memory(held_path)->bytes().size();
  // A run's connections may not VACUUM (env/confinement.h); these two may.
  sqlite3_set_authorizer(held[0], nullptr, nullptr);
  sqlite3_set_authorizer(disk[0], nullptr, nullptr);
  for (const char* sql : {"DELETE FROM t", "VACUUM", "SELECT count(*) FROM t"}) {
    int rc_held = 0, rc_disk = 0;
    EXPECT_EQ(answer(held[0], sql, rc_held), answer(disk[0], sql, rc_disk)) << sql;
    EXPECT_EQ(rc_held, SQLITE_DONE) << sql;
    EXPECT_EQ(rc_disk, SQLITE_DONE) << sql;
  }
  EXPECT_LT(held_in_memory(held_path)->bytes().size(), before);
  for (std::size_t k = 0; k < held.size(); ++k) {
    sqlite3_close(held[k]);
    sqlite3_close(disk[k]);
  }
  const std::shared_ptr<HeldBytes> bytes = held_in_memory(held_path);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->bytes(), file_bytes(disk_path));
  EXPECT_EQ(file_bytes(held_path), "") << "a held file's reads and writes never reach the disk";
  EXPECT_GT(ok, 500);
  EXPECT_GT(busy, 100);
  remove_database(held_path);
  remove_database(disk_path);
  EXPECT_FALSE(held_in_memory(held_path)) << "remove_database() lets the bytes go";
}

// What a run uses: RunDatabase holds its file, so its connections read and
// write memory (and a reset is a copy there).
TEST(HeldFile, TheRunDatabaseIsHeld) {
  RunDatabase db;
  const auto seed = [](sqlite3* c) { ASSERT_EQ(exec_script(c, "CREATE TABLE t(k INTEGER PRIMARY KEY);"), ""); };
  db.reset("held-file-test", seed);
  const std::string path = sqlite3_db_filename(db.checker().handle(), "main");
  sqlite3* probe = open_database(path);
  int rc = 0;
  answer(probe, "INSERT INTO t VALUES (7)", rc);
  ASSERT_EQ(rc, SQLITE_DONE);
  sqlite3_close(probe);
  const std::shared_ptr<HeldBytes> bytes = held_in_memory(path);
  ASSERT_TRUE(bytes);
  EXPECT_NE(bytes->bytes(), file_bytes(path)) << "the insert went to memory";
  db.reset("held-file-test", seed);
  probe = open_database(path);
  EXPECT_EQ(answer(probe, "SELECT count(*) FROM t", rc), "0;") << "the reset wrote the image over the insert";
  sqlite3_close(probe);
  db.discard();
}


// restore() copies back only what changed since the last assign() or
// restore(): after any writes and resizes, of any sizes and at any offsets
// (across chunk edges, past the end, truncates that cut into the image and
// grow again), the bytes are the image again, exactly.
RC_GTEST_PROP(HeldBytesProperty, RestoreGivesBackTheImageAfterAnyWritesAndResizes, ()) {
  const auto image_size = *rc::gen::inRange<std::size_t>(0, 5 * 4096 + 100);
  std::string image(image_size, '\0');
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<char>(i * 131 + image_size);
  HeldBytes held(image);
  const auto rounds = *rc::gen::inRange(1, 4);
  for (int round = 0; round < rounds; ++round) {
    const auto steps = *rc::gen::inRange(0, 12);
    for (int step = 0; step < steps; ++step) {
      const std::size_t size = held.bytes().size();
      if (*rc::gen::inRange(0, 4) == 0) {
        held.resize(*rc::gen::inRange<std::size_t>(0, size + 2 * 4096 + 1));
      } else {
        const auto offset = *rc::gen::inRange<std::size_t>(0, size + 4096 + 1);
        const auto n = *rc::gen::inRange<std::size_t>(1, 3 * 4096);
        const std::string data(n, static_cast<char>('a' + step));
        held.write(offset, data.data(), data.size());
        RC_ASSERT(held.bytes().size() >= offset + n);
        RC_ASSERT(held.bytes().compare(offset, n, data) == 0);
      }
    }
    held.restore(image);
    RC_ASSERT(held.bytes() == image);
  }
}

// A write past the end leaves a gap that reads as zeros, as a file's does.
TEST(HeldBytes, AGapReadsAsZerosAndAnAssignStartsTheRecordOver) {
  HeldBytes held(std::string(10, 'x'));
  held.write(20, "yz", 2);
  EXPECT_EQ(held.bytes(), std::string(10, 'x') + std::string(10, '\0') + "yz");
  const std::string other(8192, 'o');
  held.assign(other);
  EXPECT_EQ(held.bytes(), other);
  held.write(5000, "p", 1);
  held.restore(other);
  EXPECT_EQ(held.bytes(), other) << "restored against the assigned image, not the first";
}

}  // namespace
}  // namespace twice::env
