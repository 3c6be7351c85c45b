// The exhaustive search through the real scheduler, on tiny task sets whose
// schedule counts are known by hand: every order once, sleep sets pruning
// exactly the orders that swap independent steps, the preemption and fault
// bounds, the budget, and replay from a run's choices.
#include "sim/exhaustive_search.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/choices.h"
#include "sim/knuth_estimate.h"
#include "sim/scheduler.h"

namespace twice::sim {
namespace {

// A task: the operations it runs, one per step. Under the exhaustive strategy
// a task's start runs on into its first operation (sim/scheduler.cpp), so a
// task of n operations makes n steps.
using Ops = std::vector<std::string>;

struct Explored {
  long runs = 0;
  long schedules = 0;
  bool complete = false;
  std::set<std::vector<std::string>> orders;  // the operations in the order each counted run ran them
  std::vector<std::vector<std::uint64_t>> choices;  // each counted run's choices
  std::vector<int> preemptions;                      // each counted run's preemptions
};

std::vector<std::string> run_tasks(const std::vector<Ops>& tasks, Choices& choices) {
  Trace trace;
  StrategySpec spec;
  spec.kind = StrategyKind::kExhaustive;
  // One latency: these tests count orders of steps, not tempos (a range
  // would double every tree: EveryDurationOfARunTakesTheSameEndOfItsRange).
  SchedulerLimits limits;
  limits.latency_max = limits.latency_min;
  Scheduler s(spec, choices, trace, limits);
  std::vector<std::string> order;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    s.spawn("t", 0, [&s, &order, &tasks, i] {
      for (const auto& op : tasks[i]) {
        if (!s.point(op)) return;
        order.push_back("T" + std::to_string(i + 1) + ": " + op);
      }
    });
  }
  s.run();
  return order;
}

Explored explore(const std::vector<Ops>& tasks, SearchBounds bounds) {
  ExhaustiveSearch search(bounds);
  Explored out;
  while (search.start_run()) {
    Choices choices(Choices::Exhaustive{}, search);
    std::vector<std::string> order = run_tasks(tasks, choices);
    search.end_run();
    if (search.redundant()) continue;
    out.orders.insert(order);
    out.choices.push_back(choices.consumed());
    out.preemptions.push_back(search.preemptions());
  }
  EXPECT_FALSE(search.diverged());
  out.runs = search.runs();
  out.schedules = search.schedules();
  out.complete = search.complete();
  return out;
}

long binomial(int n, int k) {
  long r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

SearchBounds unbounded(bool reduce) {
  SearchBounds b;
  b.preemption_bound = -1;
  b.reduce = reduce;
  return b;
}

Ops repeated(const std::string& op, int n) { return Ops(static_cast<std::size_t>(n), op); }

// Two tasks of n steps each interleave in C(2n, n) ways, each run once.
TEST(ExhaustiveSearch, TwoTasksOfNStepsRunAllC2nNOrdersWithoutReduction) {
  for (int n = 1; n <= 5; ++n) {
    const Ops ops = repeated("UPDATE t SET v = v + 1", n);
    const Explored e = explore({ops, ops}, unbounded(false));
    EXPECT_TRUE(e.complete);
    EXPECT_EQ(e.runs, binomial(2 * n, n)) << "n = " << n;
    EXPECT_EQ(e.schedules, binomial(2 * n, n)) << "n = " << n;
  }
}

// Independent steps: reads of one table, reads and writes of another, inside
// transactions; one order stands for all.
TEST(ExhaustiveSearch, TwoTasksOfTwoIndependentStepsAreOneScheduleAfterReduction) {
  const Ops reader = {"SELECT v FROM a WHERE id = 1", "SELECT v FROM a WHERE id = 2"};
  const Explored reduced = explore({reader, reader}, unbounded(true));
  EXPECT_TRUE(reduced.complete);
  EXPECT_EQ(reduced.schedules, 1);
  const Explored full = explore({reader, reader}, unbounded(false));
  EXPECT_EQ(full.schedules, binomial(4, 2));
}

// Dependent operations (autocommit writes: each commits): the two chains'
// orders, C(2n, n) of them, all distinct: nothing to prune.
TEST(ExhaustiveSearch, TwoTasksOfNDependentOperationsKeepAllC2nNOrdersAfterReduction) {
  for (int n = 1; n <= 4; ++n) {
    const Explored e = explore({repeated("UPDATE t SET v = 1", n), repeated("UPDATE t SET v = 2", n)}, unbounded(true));
    EXPECT_TRUE(e.complete);
    EXPECT_EQ(e.schedules, binomial(2 * n, n)) << "n = " << n;
    EXPECT_EQ(static_cast<long>(e.orders.size()), e.schedules) << "every counted schedule is a new order";
    EXPECT_GE(e.runs, e.schedules);
  }
}

// Mixed: T1 writes a (in a transaction), T2 reads b: independent; T3 reads a:
// dependent on T1's write only. The orders that matter: T3's read before or
// after T1's write.
TEST(ExhaustiveSearch, ReductionKeepsOneOrderPerOrderOfTheDependentSteps) {
  const Ops writer = {"BEGIN", "UPDATE a SET v = 1"};
  const Ops other = {"SELECT v FROM b"};
  const Ops reader = {"SELECT v FROM a"};
  const Explored e = explore({writer, other, reader}, unbounded(true));
  EXPECT_EQ(e.schedules, 2);
  std::set<bool> read_first;
  for (const auto& order : e.orders) {
    const auto pos = [&](const std::string& what) { return std::find(order.begin(), order.end(), what) - order.begin(); };
    read_first.insert(pos("T3: SELECT v FROM a") < pos("T1: UPDATE a SET v = 1"));
  }
  EXPECT_EQ(read_first, (std::set<bool>{false, true}));
}

// Preemptions: a switch away from a task that could go on. The count with at
// most K of them, for two tasks of n steps, by brute force over every order.
long orders_within(int n, int bound) {
  long count = 0;
  for (unsigned mask = 0; mask < (1u << (2 * n)); ++mask) {
    if (__builtin_popcount(mask) != n) continue;
    int left[2] = {n, n};
    int last = -1;
    int preemptions = 0;
    for (int i = 0; i < 2 * n; ++i) {
      const int t = (mask >> i) & 1;
      if (last >= 0 && t != last && left[last] > 0) ++preemptions;
      --left[t];
      last = t;
    }
    if (preemptions <= bound) ++count;
  }
  return count;
}

TEST(ExhaustiveSearch, PreemptionBoundKeepsExactlyTheOrdersWithAtMostKPreemptions) {
  for (int n = 2; n <= 4; ++n) {
    for (int k = 0; k <= 3; ++k) {
      SearchBounds b;
      b.preemption_bound = k;
      b.reduce = false;
      const Ops ops = repeated("UPDATE t SET v = v + 1", n);
      const Explored e = explore({ops, ops}, b);
      EXPECT_EQ(e.schedules, orders_within(n, k)) << "n = " << n << ", k = " << k;
      for (int p : e.preemptions) EXPECT_LE(p, k);
    }
  }
}

// Faults: each chance() a binary choice, at most F firing.
// Knuth's random probes on trees of known size: two tasks of n steps, C(2n, n)
// orders unbounded, orders_within(n, k) under a preemption bound. The
// estimator is unbiased; 4000 probes from a fixed seed land within 10%, and
// the same seed gives the same estimate.
TEST(KnuthEstimate, EstimatesTreesOfKnownSizeDeterministically) {
  for (int n = 2; n <= 4; ++n) {
    for (int k : {-1, 1, 2}) {
      SearchBounds b = unbounded(false);
      b.preemption_bound = k;
      const Ops ops = repeated("UPDATE t SET v = v + 1", n);
      const auto run = [&ops](KnuthProbe& probe) {
        Choices choices(Choices::Exhaustive{}, probe);
        (void)run_tasks({ops, ops}, choices);
      };
      const double estimate = knuth_estimate(b, 7, 4000, run);
      const double exact = static_cast<double>(k < 0 ? binomial(2 * n, n) : orders_within(n, k));
      EXPECT_EQ(explore({ops, ops}, b).schedules, static_cast<long>(exact)) << "n = " << n << ", k = " << k;
      EXPECT_NEAR(estimate, exact, exact * 0.1) << "n = " << n << ", k = " << k;
      EXPECT_EQ(knuth_estimate(b, 7, 4000, run), estimate);
    }
  }
  // A tree whose leaves are all at one depth with one branching factor: every probe is exact.
  SearchBounds b = unbounded(false);
  const auto one = [](KnuthProbe& probe) {
    Choices choices(Choices::Exhaustive{}, probe);
    (void)run_tasks({{"UPDATE t SET v = 1"}, {"UPDATE t SET v = 2"}}, choices);
  };
  EXPECT_EQ(knuth_estimate(b, 1, 3, one), 2.0);
}

TEST(ExhaustiveSearch, FaultChoicesUpToMaxFaults) {
  for (int f = 0; f <= 3; ++f) {
    SearchBounds b;
    b.max_faults = f;
    ExhaustiveSearch search(b);
    std::set<std::vector<bool>> seen;
    while (search.start_run()) {
      Choices choices(Choices::Exhaustive{}, search);
      std::vector<bool> fired;
      for (int i = 0; i < 3; ++i) fired.push_back(choices.chance(0.5));
      search.end_run();
      seen.insert(fired);
    }
    const long want = 1 + (f >= 1 ? 3 : 0) + (f >= 2 ? 3 : 0) + (f >= 3 ? 1 : 0);
    EXPECT_EQ(search.schedules(), want) << "F = " << f;
    EXPECT_EQ(static_cast<long>(seen.size()), want);
  }
}

// Durations are searched at two tempos, not one by one: in a run every
// duration with a range takes its lower end, or every one its upper end
// (one draw of 2, where the first is asked for). A run that asks for none
// draws nothing: a tree of one schedule stays one.
TEST(ExhaustiveSearch, EveryDurationOfARunTakesTheSameEndOfItsRange) {
  ExhaustiveSearch search(SearchBounds{});
  std::set<std::vector<Micros>> seen;
  while (search.start_run()) {
    Choices choices(Choices::Exhaustive{}, search);
    std::vector<Micros> durations;
    durations.push_back(choices.between(10, 20));
    durations.push_back(choices.between(5, 5));
    durations.push_back(choices.between(100, 300));
    search.end_run();
    seen.insert(durations);
  }
  EXPECT_EQ(search.schedules(), 2);
  EXPECT_EQ(seen, (std::set<std::vector<Micros>>{{10, 5, 100}, {20, 5, 300}}));

  ExhaustiveSearch fixed(SearchBounds{});
  while (fixed.start_run()) {
    Choices choices(Choices::Exhaustive{}, fixed);
    EXPECT_EQ(choices.between(7, 7), 7);
    fixed.end_run();
  }
  EXPECT_EQ(fixed.schedules(), 1);

  // A replayed sequence names the tempo like any other draw: 1 is the upper end.
  Choices slow(Choices::Exhaustive{}, std::vector<std::uint64_t>{1});
  EXPECT_EQ(slow.between(10, 20), 20);
  EXPECT_EQ(slow.between(1, 2), 2);
  EXPECT_EQ(slow.consumed(), (std::vector<std::uint64_t>{1}));
}

TEST(ExhaustiveSearch, EachRunReplaysFromItsChoices) {
  const Ops a = {"UPDATE t SET v = 1", "SELECT v FROM t"};
  const Ops b = {"INSERT INTO t VALUES (2)", "COMMIT"};
  const Explored e = explore({a, b, a}, SearchBounds{});
  ASSERT_GT(e.schedules, 3);
  std::set<std::vector<std::string>> replayed;
  for (const auto& c : e.choices) {
    Choices again(Choices::Exhaustive{}, c);
    replayed.insert(run_tasks({a, b, a}, again));
    EXPECT_EQ(again.consumed(), c);
  }
  EXPECT_EQ(replayed, e.orders);
}

TEST(ExhaustiveSearch, BudgetStopsTheSearchAndTheRestIsEstimated) {
  const Ops ops = repeated("UPDATE t SET v = v + 1", 3);
  SearchBounds b = unbounded(false);
  b.budget = 10;
  const Explored e = explore({ops, ops}, b);
  EXPECT_EQ(e.runs, 10);
  EXPECT_FALSE(e.complete);
  ExhaustiveSearch search(b);
  while (search.start_run()) {
    Choices choices(Choices::Exhaustive{}, search);
    run_tasks({ops, ops}, choices);
    search.end_run();
  }
  EXPECT_GT(search.estimated_schedules(), 10.0);
  EXPECT_LT(search.estimated_schedules(), 4.0 * binomial(6, 3));
}

TEST(Footprint, ReadsStatementsConservatively) {
  EXPECT_EQ(describe(footprint_of("SELECT status FROM orders WHERE order_no = 'O-1'", false)),
            "reads orders; writes ; rows of orders: order_no=o-1");
  EXPECT_EQ(describe(footprint_of("SELECT * FROM orders o JOIN accounts a ON a.user = o.user", true)),
            "reads orders, accounts; writes ");
  EXPECT_EQ(describe(footprint_of("UPDATE orders SET status = 'PAID' WHERE order_no = 'FROM ledger'", true)),
            "reads ; writes orders, #writer; rows of orders: order_no=from ledger");
  EXPECT_EQ(describe(footprint_of("INSERT OR IGNORE INTO ledger (k) VALUES ('x')", true)),
            "reads ; writes ledger, #writer; rows of ledger: k=x");
  EXPECT_EQ(describe(footprint_of("INSERT INTO ledger (k) VALUES ('x')", false)), "the whole database")
      << "autocommit: it commits at once";
  EXPECT_EQ(describe(footprint_of("SELECT v FROM a WHERE id IN (SELECT id FROM b)", true)), "the whole database");
  EXPECT_EQ(describe(footprint_of("SELECT changes()", true)), "the whole database");
  EXPECT_EQ(describe(footprint_of("BEGIN", false)), "nothing");
  EXPECT_EQ(describe(footprint_of("BEGIN IMMEDIATE", false)), "reads ; writes #writer");
  EXPECT_EQ(describe(footprint_of("COMMIT", true)), "the whole database");
  EXPECT_EQ(describe(footprint_of("now()", true)), "everything");
  EXPECT_EQ(describe(footprint_of("SET lock:O-1 T1 NX PX 30000", false)), "everything");
  EXPECT_EQ(describe(footprint_of("", false)), "everything");
  EXPECT_EQ(describe(footprint_of("VACUUM", false)), "everything");
}

TEST(Footprint, IndependenceNeedsNoWriteOnSharedTables) {
  const Footprint read_a = footprint_of("SELECT v FROM a", true);
  const Footprint read_b = footprint_of("SELECT v FROM b", true);
  const Footprint write_a = footprint_of("UPDATE a SET v = 1", true);
  const Footprint write_b = footprint_of("DELETE FROM b", true);
  EXPECT_TRUE(independent(read_a, read_a));
  EXPECT_TRUE(independent(read_a, write_b));
  EXPECT_FALSE(independent(read_a, write_a));
  EXPECT_FALSE(independent(write_a, write_b)) << "SQLite has one writer";
  EXPECT_TRUE(independent(Footprint{}, Footprint::all()));
  EXPECT_FALSE(independent(read_a, footprint_of("COMMIT", true)));
}

// Key-level rows: statements on different keys of one table commute, and
// every way a statement could reach rows outside its keys keeps it
// dependent (the negative controls: each would be a lost order if keyed).
TEST(Footprint, DifferentKeysOfOneTableCommuteAndNothingElseDoes) {
  const auto f = [](const char* sql) { return footprint_of(sql, true); };
  const Footprint read_1 = f("SELECT status FROM orders WHERE order_no = 'O-1'");
  EXPECT_TRUE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE order_no = 'O-2' AND status = 'WAIT_PAY'")));
  EXPECT_TRUE(independent(read_1, f("DELETE FROM orders WHERE order_no = 'O-2'")));
  EXPECT_TRUE(independent(read_1, f("INSERT INTO orders (order_no, amount) VALUES ('O-2', 100)")));
  EXPECT_TRUE(independent(read_1, f("INSERT OR IGNORE INTO orders (order_no, amount) VALUES ('O-2', 100)")));
  EXPECT_TRUE(independent(f("SELECT * FROM orders o WHERE o.order_no = 'O-1' AND o.status = 'PAID' LIMIT 1"),
                          f("UPDATE orders SET amount = amount + 1 WHERE order_no = 'O-2'")));
  // The same key, or keys that may compare equal.
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE order_no = 'o-1 '"))) << "NOCASE, RTRIM";
  EXPECT_FALSE(independent(f("SELECT v FROM t WHERE id = '05'"), f("UPDATE t SET v = 1 WHERE id = 5"))) << "affinity";
  EXPECT_FALSE(independent(read_1, f("INSERT INTO orders (order_no, amount) VALUES ('O-1', 100)")));
  // Another column, no key, or a WHERE that is not a plain conjunction.
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE id = 7")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID'")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE order_no = 'O-2' OR amount = 5")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE NOT order_no = 'O-2'")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE (order_no = 'O-2' OR 1)")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET status = 'PAID' WHERE order_no = 'O-2' COLLATE BINARY")));
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET v = 1 WHERE amount BETWEEN 1 AND order_no = 'O-2'")));
  // The rows move: an UPDATE that sets the key column, an upsert, REPLACE.
  EXPECT_FALSE(independent(read_1, f("UPDATE orders SET order_no = 'O-1' WHERE order_no = 'O-2'")));
  EXPECT_FALSE(independent(read_1, f("INSERT INTO orders (order_no, v) VALUES ('O-2', 1) ON CONFLICT (v) DO UPDATE "
                                     "SET order_no = 'O-1'")));
  EXPECT_FALSE(independent(read_1, f("INSERT OR REPLACE INTO orders (order_no, v) VALUES ('O-2', 1)")));
  EXPECT_FALSE(independent(read_1, f("REPLACE INTO orders (order_no, v) VALUES ('O-2', 1)")));
  EXPECT_FALSE(independent(read_1, f("INSERT INTO orders (order_no) VALUES ('O-2'), ('O-1')")));
  EXPECT_FALSE(independent(read_1, f("INSERT INTO orders (order_no) VALUES (lower('O-1'))")));
  // A join or a FROM list: no keys.
  EXPECT_FALSE(independent(f("SELECT * FROM orders, ledger WHERE order_no = 'O-1'"),
                           f("UPDATE orders SET v = 1 WHERE order_no = 'O-2'")));
  // Writers still share SQLite's one writer lock.
  EXPECT_FALSE(independent(f("UPDATE orders SET v = 1 WHERE order_no = 'O-1'"),
                           f("UPDATE orders SET v = 1 WHERE order_no = 'O-2'")));
  // A step that touches one table twice is keyed by what both accesses share.
  Footprint both = read_1;
  both.merge(f("SELECT amount FROM orders WHERE order_no = 'O-3'"));
  EXPECT_FALSE(independent(both, f("DELETE FROM orders WHERE order_no = 'O-3'")));
  Footprint same = read_1;
  same.merge(f("SELECT amount FROM orders WHERE order_no = 'O-1' AND v = 2"));
  EXPECT_TRUE(independent(same, f("DELETE FROM orders WHERE order_no = 'O-3'")));
}

// Through the search: reads and writes of different orders' rows commute, so
// their order is explored once; the same program on one order's rows keeps
// both orders of the read and the write (the negative control).
TEST(ExhaustiveSearch, KeyedStepsOnDifferentRowsAreOneScheduleAndOnTheSameRowTwo) {
  const Ops read_1 = {"BEGIN", "SELECT status FROM orders WHERE order_no = 'O-1'"};
  const Ops write_2 = {"BEGIN", "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-2'"};
  const Ops write_1 = {"BEGIN", "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'"};
  const Ops write_by_id = {"BEGIN", "UPDATE orders SET status = 'PAID' WHERE id = 1"};
  EXPECT_EQ(explore({read_1, write_2}, unbounded(true)).schedules, 1);
  EXPECT_EQ(explore({read_1, write_1}, unbounded(true)).schedules, 2);
  EXPECT_EQ(explore({read_1, write_by_id}, unbounded(true)).schedules, 2);
  EXPECT_EQ(explore({read_1, write_2}, unbounded(false)).schedules, binomial(4, 2));
}

TEST(Footprint, TriggersWriteWhatTheirBodiesWrite) {
  TriggerWrites t;
  ASSERT_TRUE(trigger_writes("CREATE TABLE orders (status TEXT);\n"
                             "CREATE TRIGGER h AFTER UPDATE OF status ON orders WHEN OLD.status <> NEW.status\n"
                             "BEGIN INSERT INTO history(s) VALUES ('on ledger'); UPDATE stats SET n = n + 1; END;",
                             t));
  EXPECT_EQ(t, (TriggerWrites{{"orders", {"history", "stats"}}}));
  Footprint f = footprint_of("UPDATE orders SET status = 'PAID'", true);
  add_trigger_writes(t, f);
  EXPECT_EQ(describe(f), "reads ; writes orders, #writer, history, stats");
  TriggerWrites none;
  EXPECT_FALSE(trigger_writes("CREATE TABLE a (id INTEGER REFERENCES b(id))", none));
}

TEST(Footprint, TransactionState) {
  EXPECT_TRUE(in_transaction_after("BEGIN", false));
  EXPECT_FALSE(in_transaction_after("COMMIT", true));
  EXPECT_FALSE(in_transaction_after("ROLLBACK", true));
  EXPECT_TRUE(in_transaction_after("ROLLBACK TO SAVEPOINT s", true));
  EXPECT_TRUE(in_transaction_after("SELECT 1", true));
}

}  // namespace
}  // namespace twice::sim
