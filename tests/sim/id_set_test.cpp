// IdSet against std::set over random inserts and erases: the same members,
// the same smallest id, the same order when visited a word at a time from
// low() (the scheduler's enabled list is built that way, so a wrong bit or a
// low() past a member would change which task a seed runs).
#include "sim/id_set.h"

#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace twice::sim {
namespace {

struct Op {
  bool insert;
  int id;
};

RC_GTEST_PROP(IdSet, HoldsWhatASetHoldsInIdOrder, ()) {
  // Ids in a window that moves up, as a run's tasks do: spawned in order, most ending.
  const auto ops = *rc::gen::container<std::vector<Op>>(rc::gen::build<Op>(
      rc::gen::set(&Op::insert, rc::gen::arbitrary<bool>()), rc::gen::set(&Op::id, rc::gen::inRange(1, 400))));
  IdSet set;
  std::set<int> model;
  for (const Op& op : ops) {
    if (op.insert) {
      set.insert(op.id);
      model.insert(op.id);
    } else {
      set.erase(op.id);
      model.erase(op.id);
    }
    RC_ASSERT(set.size() == model.size());
    RC_ASSERT(set.first() == (model.empty() ? 0 : *model.begin()));
    RC_ASSERT(set.contains(op.id) == (model.count(op.id) > 0));
  }
  std::vector<int> visited;
  const std::size_t low = set.low();
  RC_ASSERT((low == IdSet::kNoWord) == model.empty());
  for (std::size_t w = model.empty() ? set.words() : low; w < set.words(); ++w)
    IdSet::each(w, set.word(w), [&](int id) { visited.push_back(id); });
  RC_ASSERT(visited == std::vector<int>(model.begin(), model.end()));
}

TEST(IdSet, LowSkipsTheEmptiedWordsAndComesBackForALowerId) {
  IdSet set;
  for (int id = 1; id <= 200; ++id) set.insert(id);
  for (int id = 1; id <= 150; ++id) set.erase(id);
  EXPECT_EQ(set.low(), 2u);  // ids 129-192 are word 2
  EXPECT_EQ(set.first(), 151);
  set.insert(3);  // a task of a low id filed again (a sleeper woken)
  EXPECT_EQ(set.low(), 0u);
  EXPECT_EQ(set.first(), 3);
  for (int id : {3, 151}) set.erase(id);
  EXPECT_EQ(set.first(), 152);
  for (int id = 152; id <= 200; ++id) set.erase(id);
  EXPECT_EQ(set.low(), IdSet::kNoWord);
  EXPECT_EQ(set.first(), 0);
  EXPECT_TRUE(set.empty());
}

}  // namespace
}  // namespace twice::sim
