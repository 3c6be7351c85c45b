// Which tasks a counterexample's transcript shows. A background job serves no
// one order, so its task carries none; it is still part of the story when it
// touched a shown order: the reconciler that credits an order a notify also
// credits is one of the two credits of a double credit, and the order-closer
// that closed it between a notify's read and its write is the race itself.
// And how a long one is cut.
#include <gtest/gtest.h>

#include <algorithm>

#include "explore/transcript.h"
#include "gateway/scenario.h"
#include "sim/trace.h"
#include "../support.h"

namespace twice {
namespace {

bool has_column_ending(const explore::Counterexample& cex, const std::string& suffix) {
  return std::any_of(cex.columns.begin(), cex.columns.end(),
                     [&](const std::string& c) { return c.ends_with(suffix); });
}

TEST(Transcript, AReconcilerThatCreditedTheOrderIsShownBesideTheNotify) {
  auto s = testing::bundled_scenario("close-race");
  s.reconciler = true;
  // The first seed (of a fixed range) whose double credit went through the
  // reconciler: it updated the order, though its task has no order of its own.
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const auto r = testing::run_seed(s, "event-id-dedupe", seed);
    const check::Violation* v = nullptr;
    for (const auto& x : r.verdict.violations)
      if (x.invariant == "double_credit") v = &x;
    if (!v) continue;
    bool job_credited = false;
    for (const auto& e : r.trace.events()) {
      auto task = r.tasks.find(e.task);
      job_credited |= task != r.tasks.end() && task->second.name == "reconciler" &&
                      e.kind == sim::TraceKind::kSql && e.text.find(v->subject) != std::string::npos &&
                      e.text.starts_with("UPDATE");
    }
    if (!job_credited) continue;
    explore::Counterexample cex;
    explore::build_transcript(r, s, *v, cex);
    EXPECT_TRUE(has_column_ending(cex, ": reconciler")) << "seed " << seed;
    return;
  }
  FAIL() << "no seed in 1..400 double-credits through the reconciler; the scenario changed";
}

// flash-sale: a shown task refused the write lock waits while hidden tasks
// (other orders' writers) take it in turn; a note before its next row says how
// long it waited and who ran, so its resumption has a cause. The hidden steps
// counted in the note are among those counted as hidden.
TEST(Transcript, AWaitBehindHiddenTasksIsNotedBeforeTheWaitersNextRow) {
  const auto s = testing::bundled_scenario("flash-sale");
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const auto r = testing::run_seed(s, "lock-only", seed);
    for (const auto& v : r.verdict.violations) {
      explore::Counterexample cex;
      explore::build_transcript(r, s, v, cex);
      for (std::size_t i = 0; i < cex.rows.size(); ++i) {
        const auto& row = cex.rows[i];
        if (row.kind != "note" || !row.text.starts_with("(waited ")) continue;
        EXPECT_FALSE(row.step);
        EXPECT_NE(row.text.find(" for the lock; meanwhile "), std::string::npos) << row.text;
        EXPECT_NE(row.text.find(" hidden step"), std::string::npos) << row.text;
        EXPECT_GT(cex.hidden_steps, 0);
        // The waiter's earlier row was refused the lock, and its next is in the same column.
        bool refused_before = false;
        for (std::size_t j = 0; j < i; ++j)
          refused_before |= cex.rows[j].column == row.column && cex.rows[j].result.find("waits for the lock") != std::string::npos;
        EXPECT_TRUE(refused_before) << "seed " << seed;
        ASSERT_LT(i + 1, cex.rows.size());
        EXPECT_EQ(cex.rows[i + 1].column, row.column);
        return;
      }
    }
  }
  FAIL() << "no seed in 1..200 shows a wait behind hidden tasks; the scenario changed";
}

// close-race: the order-closer's UPDATE names no order ("WHERE status =
// 'WAIT_PAY' AND created_at <= X"), yet it closed the order between the
// notify's SELECT and its UPDATE; the transcript shows it beside the notify.
TEST(Transcript, AnOrderCloserThatClosedTheOrderIsShownThoughItNamesNoOrder) {
  const auto s = testing::bundled_scenario("close-race");
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const auto r = testing::run_seed(s, "check-then-act", seed);
    const check::Violation* v = nullptr;
    for (const auto& x : r.verdict.violations)
      if (x.invariant == "illegal_transition") v = &x;
    if (!v) continue;
    explore::Counterexample cex;
    explore::build_transcript(r, s, *v, cex);
    EXPECT_TRUE(std::any_of(cex.columns.begin(), cex.columns.end(),
                            [](const std::string& c) { return c.find("close") != std::string::npos; }))
        << "seed " << seed << ": " << ::testing::PrintToString(cex.columns);
    bool closes = false;
    for (const auto& row : cex.rows) closes |= row.text.find("SET status = 'CLOSED'") != std::string::npos;
    EXPECT_TRUE(closes) << "seed " << seed;
    return;
  }
  FAIL() << "no seed in 1..400 shows illegal_transition; the scenario changed";
}

// A run made by hand: tasks, their trace lines, the services' effects.
struct HandRun {
  gateway::Scenario scenario = testing::one_order_scenario();
  run::RunResult run;
  void task(int id, std::string name, std::string order) { run.tasks[id] = run::TaskInfo{std::move(name), std::move(order)}; }
  void line(Micros at, int task, sim::TraceKind kind, std::string text, std::string result = {}) {
    run.trace.add(sim::TraceEvent{at, task, kind, std::move(text), std::move(result)});
  }
};

// A statement of a job that changed rows of another table, or that picks
// another order by its key, is not about the order shown.
TEST(Transcript, AJobThatCouldNotHaveChangedTheOrderIsLeftOut) {
  HandRun h;
  h.task(1, "notify O-1 #1", "O-1");
  h.task(2, "order-closer", "");
  h.line(10, 1, sim::TraceKind::kSql, "SELECT status FROM orders WHERE order_no = 'O-1'", "1 row (status='WAIT_PAY')");
  h.line(20, 2, sim::TraceKind::kSql, "UPDATE orders SET status = 'CLOSED' WHERE order_no = 'O-2'", "1 row changed");
  h.line(25, 2, sim::TraceKind::kSql, "UPDATE carts SET done = 1 WHERE created_at <= 5", "3 rows changed");
  h.line(27, 2, sim::TraceKind::kSql, "UPDATE orders SET status = 'CLOSED' WHERE created_at <= 5", "0 rows changed");
  const check::Violation v(check::Invariant::kIllegalTransition, "O-1", "order O-1 moved CLOSED -> PAID");
  explore::Counterexample cex;
  explore::build_transcript(h.run, h.scenario, v, cex);
  EXPECT_EQ(cex.columns, std::vector<std::string>{"T1: notify O-1 #1"});
  // The same job changing rows it picks by other columns may have closed O-1.
  h.line(30, 2, sim::TraceKind::kSql, "UPDATE orders SET status = 'CLOSED' WHERE status = 'WAIT_PAY' AND created_at <= 5",
         "2 rows changed");
  explore::build_transcript(h.run, h.scenario, v, cex = {});
  EXPECT_EQ(cex.columns, (std::vector<std::string>{"T1: notify O-1 #1", "T2: order-closer"}));
}

// An attacker's notify for an order the scenario does not list: its story is
// that order's task and effects, not every task of the run.
TEST(Transcript, AViolationOnAnOrderOutsideTheScenarioShowsThatOrdersTasks) {
  HandRun h;
  h.task(1, "notify O-1 #1", "O-1");
  h.task(2, "notify O-UNKNOWN-4 #1", "O-UNKNOWN-4");
  h.task(3, "relay", "");
  h.line(10, 1, sim::TraceKind::kSql, "SELECT 1 FROM orders WHERE order_no = 'O-1'", "1 row");
  h.line(20, 2, sim::TraceKind::kCall, "call mail thanks O-UNKNOWN-4", "ok");
  h.line(30, 3, sim::TraceKind::kSql, "SELECT id FROM outbox", "0 rows");
  h.run.effects.push_back(services::AppliedEffect{20, 2, "mail", "mail", "O-UNKNOWN-4", ""});
  const check::Violation v(check::Invariant::kEffectWithoutPayment, "O-UNKNOWN-4", "mail applied ...");
  explore::Counterexample cex;
  explore::build_transcript(h.run, h.scenario, v, cex);
  EXPECT_EQ(cex.columns, std::vector<std::string>{"T2: notify O-UNKNOWN-4 #1"});
  EXPECT_EQ(cex.hidden_steps, 2);
  ASSERT_EQ(cex.effects.size(), 1u);
  EXPECT_EQ(cex.effects[0].order_no, "O-UNKNOWN-4");
}

// O-1's story names O-1, not O-10 or O-11 (an order number is matched
// whole); the process's restart after a shown task's crash stays in it.
TEST(Transcript, OrdersAreMatchedWholeAndARestartAfterAShownCrashIsKept) {
  HandRun h;
  h.task(1, "notify O-1 #1", "O-1");
  h.task(2, "notify O-10 #1", "O-10");
  h.task(3, "relay", "");
  h.line(5, 0, sim::TraceKind::kGateway, "bob pays 200 CNY for order O-10");
  h.line(6, 0, sim::TraceKind::kGateway, "alice pays 100 CNY for order O-1");
  h.line(10, 3, sim::TraceKind::kCall, "call warehouse ship O-10 key O-10:ship", "ok");
  h.line(11, 3, sim::TraceKind::kService, "warehouse: ship O-10 key O-10:ship", "applied");
  h.line(20, 2, sim::TraceKind::kFault, "the merchant's process crashes before: COMMIT");
  h.line(21, 0, sim::TraceKind::kFault, "the process is down; it restarts in 2s");
  h.line(30, 1, sim::TraceKind::kSql, "SELECT 1 FROM orders WHERE order_no = 'O-1'", "1 row");
  h.line(40, 1, sim::TraceKind::kFault, "the merchant's process crashes before: COMMIT");
  h.line(41, 0, sim::TraceKind::kFault, "the process is down; it restarts in 3s");
  const check::Violation v(check::Invariant::kDoubleCredit, "O-1", "order O-1 was credited 2 times");
  explore::Counterexample cex;
  explore::build_transcript(h.run, h.scenario, v, cex);
  EXPECT_EQ(cex.columns, std::vector<std::string>{"T1: notify O-1 #1"});
  for (const auto& row : cex.rows) EXPECT_EQ(row.text.find("O-10"), std::string::npos) << row.text;
  ASSERT_EQ(cex.gateway.size(), 2u) << ::testing::PrintToString(cex.gateway);
  EXPECT_NE(cex.gateway[0].find("alice pays"), std::string::npos) << cex.gateway[0];
  EXPECT_NE(cex.gateway[1].find("restarts in 3s"), std::string::npos) << cex.gateway[1];
}

// A shown step that failed with SQLITE_BUSY, or waited, because another
// order's task held the lock: that task is part of the story (without it the
// BUSY has no cause). The tasks its own waits name are not (a busy run would
// show every task), nor is a task no shown step names.
TEST(Transcript, TheTaskWhoseLockAShownStepWaitedForOrFailedOnIsShown) {
  HandRun h;
  h.scenario = testing::two_topups_scenario();
  h.task(1, "notify O-1 #1", "O-1");
  h.task(2, "notify O-2 #1", "O-2");
  h.task(3, "notify O-3 #1", "O-3");
  h.task(4, "notify O-4 #1", "O-4");
  h.line(10, 2, sim::TraceKind::kSql, "BEGIN", "ok");
  h.line(11, 2, sim::TraceKind::kSql, "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-2'", "1 row changed");
  h.line(12, 1, sim::TraceKind::kSql, "BEGIN", "ok");
  h.line(13, 1, sim::TraceKind::kSql, "SELECT status FROM orders WHERE order_no = 'O-1'", "1 row (status='WAIT_PAY')");
  h.line(14, 1, sim::TraceKind::kSql, "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'",
         "SQLITE_BUSY at once: this transaction holds a read lock and T2 the write lock");
  h.line(15, 2, sim::TraceKind::kSql, "COMMIT", "SQLITE_BUSY, waits for the lock T3 holds");
  h.line(16, 3, sim::TraceKind::kSql, "SELECT 1 FROM orders WHERE order_no = 'O-3'", "1 row");
  h.line(17, 4, sim::TraceKind::kSql, "SELECT 1 FROM orders WHERE order_no = 'O-4'", "1 row");
  h.line(18, 1, sim::TraceKind::kSql, "ROLLBACK", "ok");
  const check::Violation v(check::Invariant::kLostPayment, "O-1", "order O-1: ...");
  explore::Counterexample cex;
  explore::build_transcript(h.run, h.scenario, v, cex);
  EXPECT_EQ(cex.columns, (std::vector<std::string>{"T1: notify O-1 #1", "T2: notify O-2 #1"}));
  EXPECT_EQ(cex.hidden_steps, 2);  // T3's and T4's
  // Without a holder named (the BUSY of an older trace), nothing is added.
  HandRun alone;
  alone.task(1, "notify O-1 #1", "O-1");
  alone.task(2, "notify O-2 #1", "O-2");
  alone.line(10, 2, sim::TraceKind::kSql, "BEGIN IMMEDIATE", "ok");
  alone.line(11, 1, sim::TraceKind::kSql, "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'",
             "SQLITE_BUSY at once: this transaction holds a read lock and another the write lock");
  explore::build_transcript(alone.run, alone.scenario, v, cex = {});
  EXPECT_EQ(cex.columns, std::vector<std::string>{"T1: notify O-1 #1"});
}

// A livelocked task (32,000 `SELECT 1`) keeps its first and last steps and
// one "cut" row for the rest, which the step count still includes.
TEST(Transcript, ALongColumnKeepsItsFirstAndLastStepsAndOneCutRow) {
  HandRun h;
  h.task(1, "notify O-1 #1", "O-1");
  h.line(1, 1, sim::TraceKind::kTask, "starts notify O-1 #1");
  h.line(2, 1, sim::TraceKind::kSql, "SELECT status FROM orders WHERE order_no = 'O-1'", "1 row");
  for (int i = 0; i < 32000; ++i) h.line(3 + i, 1, sim::TraceKind::kSql, "SELECT 1", "1 row (1=1)");
  h.line(40000, 1, sim::TraceKind::kSql, "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'", "1 row changed");
  const check::Violation v(check::Invariant::kLostPayment, "O-1", "order O-1 ...");
  explore::Counterexample cex;
  explore::build_transcript(h.run, h.scenario, v, cex);
  EXPECT_EQ(cex.steps, 32002);
  int shown = 0, cut = 0, skipped = 0;
  for (const auto& row : cex.rows) {
    shown += row.step;
    if (row.kind == "cut") ++cut, skipped += row.skipped;
  }
  EXPECT_EQ(shown, 40);
  EXPECT_EQ(cut, 1);
  EXPECT_EQ(shown + skipped, cex.steps);
  const auto cut_row = std::find_if(cex.rows.begin(), cex.rows.end(), [](const auto& r) { return r.kind == "cut"; });
  EXPECT_EQ(cut_row->text, "... 31962 steps of T1 left out: SELECT 1 (31962 times); twice replay prints them all ...");
  EXPECT_EQ(cex.rows.front().text, "starts notify O-1 #1");
  EXPECT_EQ(cex.rows.back().text, "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'");
  // A column of 50 steps is left whole.
  HandRun small;
  small.task(1, "notify O-1 #1", "O-1");
  for (int i = 0; i < 50; ++i) small.line(1 + i, 1, sim::TraceKind::kSql, "SELECT 1", "1 row");
  explore::build_transcript(small.run, small.scenario, v, cex = {});
  EXPECT_EQ(cex.rows.size(), 50u);
}

}  // namespace
}  // namespace twice
