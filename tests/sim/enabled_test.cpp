// Enabled against the sorted list of ids it replaced: the same members, the
// same rank and nth, the same walk; and the random strategy, handed an
// Enabled, picks for every draw the task the list-walking code picked (a
// different one would change which interleaving a seed runs).
#include "sim/enabled.h"

#include <algorithm>
#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "no_tasks.h"
#include "sim/strategy.h"

namespace twice::sim {
namespace {

// Built the way the scheduler builds it: from a first word on, a word at a time.
Enabled by_words(const std::set<int>& ids) {
  Enabled e;
  if (ids.empty()) {
    e.restart(0);
    return e;
  }
  const auto low = static_cast<std::size_t>(*ids.begin() - 1) / 64;
  const auto high = static_cast<std::size_t>(*ids.rbegin() - 1) / 64;
  e.restart(low);
  for (std::size_t w = low; w <= high; ++w) {
    std::uint64_t bits = 0;
    for (int id : ids)
      if (static_cast<std::size_t>(id - 1) / 64 == w) bits |= std::uint64_t{1} << ((id - 1) % 64);
    e.append_word(bits);
  }
  return e;
}

RC_GTEST_PROP(Enabled, AnswersAsTheSortedListOfItsIds, ()) {
  const auto ids = *rc::gen::container<std::set<int>>(rc::gen::inRange(1, 400));
  const std::vector<int> list(ids.begin(), ids.end());
  std::vector<int> shuffled = list;
  std::reverse(shuffled.begin(), shuffled.end());  // the ids given keep no order of their own
  const Enabled added(shuffled);
  for (const Enabled& e : {by_words(ids), added}) {
    RC_ASSERT(e.size() == list.size());
    RC_ASSERT(e.ids() == list);
    for (std::size_t n = 0; n < list.size(); ++n) RC_ASSERT(e.nth(n) == list[n]);
    const int probe = *rc::gen::inRange(0, 460);
    RC_ASSERT(e.contains(probe) == (ids.count(probe) > 0));
    const auto below = static_cast<std::size_t>(std::lower_bound(list.begin(), list.end(), probe) - list.begin());
    RC_ASSERT(e.rank(probe) == below);
  }
}

// The random strategy as it was written over a sorted list of ids.
int pick_from_list(const std::vector<int>& enabled, int last, std::uint64_t draw) {
  const bool last_enabled = std::find(enabled.begin(), enabled.end(), last) != enabled.end();
  if (last_enabled) {
    if (draw == 0) return last;
    --draw;
  }
  for (int t : enabled)
    if (t != last && draw-- == 0) return t;
  return 0;
}

RC_GTEST_PROP(Enabled, TheRandomStrategyPicksWhatItPickedFromTheList, ()) {
  const auto ids = *rc::gen::nonEmpty(rc::gen::container<std::set<int>>(rc::gen::inRange(1, 300)));
  const std::vector<int> list(ids.begin(), ids.end());
  const int last = *rc::gen::oneOf(rc::gen::element(0, 1, 299), rc::gen::elementOf(list));
  const std::uint64_t bound = list.size();  // the others, and `last` when it is one of them
  for (std::uint64_t draw = 0; draw < bound; ++draw) {
    Choices choices(std::vector<std::uint64_t>{draw});
    NoTasks view;
    auto random = make_strategy(StrategySpec{}, choices, view);
    RC_ASSERT(random->pick(by_words(ids), last, choices) == pick_from_list(list, last, draw));
  }
}

TEST(Enabled, RankAndNthAcrossWordsAndAnEmptyWordBetween) {
  Enabled e;
  e.restart(2);  // ids 129 ...
  e.append_word(0b101);  // 129, 131
  e.append_word(0);      // none of 193-256
  e.append_word(std::uint64_t{1} << 63);  // 320
  EXPECT_EQ(e.size(), 3u);
  EXPECT_EQ(e.ids(), (std::vector<int>{129, 131, 320}));
  EXPECT_EQ(e.front(), 129);
  EXPECT_EQ(e.nth(2), 320);
  EXPECT_EQ(e.rank(1), 0u);
  EXPECT_EQ(e.rank(131), 1u);
  EXPECT_EQ(e.rank(200), 2u);
  EXPECT_EQ(e.rank(321), 3u);
  EXPECT_EQ(e.rank(10'000), 3u);
  EXPECT_FALSE(e.contains(130));
  EXPECT_FALSE(e.contains(0));
  EXPECT_TRUE(e.contains(320));
}

}  // namespace
}  // namespace twice::sim
