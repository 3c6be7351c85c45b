// DatabasePool's turns (engine/database_pool.h): a lessee is handed the
// database given back longest ago once it has a spare, so that a TRUNCATE
// sent ahead overlaps the other database's run. No server: the pool is
// given a fake database.
#include "engine/database_pool.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace twice::engine {
namespace {

struct FakeDatabase {
  std::string name;
};

class Pool {
 public:
  std::string lease() {
    std::unique_ptr<FakeDatabase> db;
    const Status s = pool_.lease(
        db,
        [&](const std::string& name) {
          made_.push_back(name);
          return Status::OK();
        },
        [](const std::string& name, std::unique_ptr<FakeDatabase>& out) {
          out = std::make_unique<FakeDatabase>(FakeDatabase{name});
          return Status::OK();
        });
    EXPECT_TRUE(s.ok()) << s.to_string();
    const std::string name = db->name;
    out_.push_back(std::move(db));
    return name;
  }
  void give_back(const std::string& name) {
    for (auto it = out_.begin(); it != out_.end(); ++it)
      if ((*it)->name == name) {
        pool_.give_back(std::move(*it));
        out_.erase(it);
        return;
      }
    ADD_FAILURE() << name << " was not leased";
  }
  const std::vector<std::string>& made() const { return made_; }

 private:
  DatabasePool<FakeDatabase> pool_;
  std::vector<std::unique_ptr<FakeDatabase>> out_;
  std::vector<std::string> made_;
};

TEST(DatabasePool, OneLesseeTakesTwoDatabasesInTurns) {
  Pool pool;
  std::vector<std::string> runs;
  for (int i = 0; i < 6; ++i) {
    runs.push_back(pool.lease());
    pool.give_back(runs.back());
  }
  ASSERT_EQ(pool.made().size(), 2u);
  const std::string a = pool.made()[0], b = pool.made()[1];
  EXPECT_NE(a, b);
  EXPECT_EQ(runs, (std::vector<std::string>{a, b, a, b, a, b}));
}

TEST(DatabasePool, TwoLesseesAtOnceNeverShareADatabaseNorTakeTheOneJustGivenBack) {
  Pool pool;
  std::string last_given_back;
  for (int round = 0; round < 6; ++round) {
    const std::string first = pool.lease();
    const std::string second = pool.lease();
    EXPECT_NE(first, second) << "round " << round;
    EXPECT_NE(first, last_given_back) << "round " << round;
    EXPECT_NE(second, last_given_back) << "round " << round;
    pool.give_back(first);
    pool.give_back(second);
    last_given_back = second;
  }
  // A spare for each: more than two, and never more than two per lessee.
  EXPECT_GE(pool.made().size(), 3u);
  EXPECT_LE(pool.made().size(), 4u);
}

TEST(DatabasePool, TheDatabaseGivenBackLongestAgoGoesFirst) {
  Pool pool;
  const std::string a = pool.lease(), b = pool.lease(), c = pool.lease();
  pool.give_back(b);
  pool.give_back(c);
  pool.give_back(a);
  // Three idle, three made for up to two lessees' spares: the oldest first.
  EXPECT_EQ(pool.lease(), b);
  EXPECT_EQ(pool.lease(), c);
}

}  // namespace
}  // namespace twice::engine
