// (f) The floor a schedule stands on (issue #12), and how a schedule's cost
// grows with the deliveries in it.
//
// BM_Floor: the statements one schedule of unique-key+cas x
// concurrent-duplicates ran (seed 1, as BM_SimulateOneSchedule), each task's
// on a connection that is already open, each statement prepared once and
// kept, and the database reset in place to the seeded image before each
// pass, as a run's is. BM_FloorResetOnly is that reset
// alone. No scheduler, no fibers, no gateway, no checker: what a schedule
// cannot cost less than. BM_FloorHeld is the same floor on a file held in
// memory (env/held_file.h), as a run's has been since session 7: the floor
// of the same storage, so that the ratio does not credit the simulator with
// the system calls the held file saves (BM_Floor keeps the file on disk, as
// on the revisions before, for before/after tables). ratios.py sets BM_SimulateOneSchedule/
// concurrent_duplicates beside it; both run in the same benchmark run.
//
// BM_Growth/<spread|burst>/<n>: one schedule (no trace, as `twice run`
// explores) of unique-key+cas with n orders, one delivery each (no network
// copies): spread pays them ten seconds apart (each delivery done before the next), burst all at once, so that all n
// deliveries contend for SQLite's write lock together. BM_FloorGrowth/<spread|burst>/<n> is its floor: the
// statements of the same schedules (the seeds BM_Growth starts with), in the order they ran, on the held file,
// on as many connections as the run had open at once (a task's connection serves a later task once the first
// is done, as the run's pool does). BM_Growth / BM_FloorGrowth at each n says whether the simulator's own
// cost grows faster than the statements' (SQLite's own costs grow too: more connections re-read more pages
// after each commit).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/bench_support.h"
#include "env/held_file.h"
#include "env/seed.h"
#include "env/seeded_database.h"
#include "env/sqlite_db.h"
#include "env/sqlite_settings.h"
#include "run/simulate.h"
#include "sim/choices.h"

namespace twice::bench {
namespace {

// Each task's statements in its order, as literal SQL from the trace of seed 1.
std::map<int, std::vector<std::string>> statements_per_task(const gateway::Scenario& scenario,
                                                            const HandlerInfo& handler) {
  const run::RunResult r = run::simulate(run::RunSpec{&scenario, &handler, sim::StrategySpec{}, 1, std::nullopt, true}).value();
  std::map<int, std::vector<std::string>> per_task;
  for (const auto& e : r.trace.events()) {
    if (e.kind != sim::TraceKind::kSql) continue;
    if (e.result.starts_with("SQLITE_BUSY")) continue;  // a wait: the statement ran once, when it got the lock
    per_task[e.task].push_back(e.text);
  }
  return per_task;
}

// The seeded database file, kept open by the floor, and reset in place as a
// run's is (env/run_database.h): the image written over it with a change
// counter the file never had, so that no connection keeps a stale page. Its
// own code rather than RunDatabase, so that the same floor builds on a
// revision without one (bench/README.md compares before and after).
class FloorDatabase {
 public:
  FloorDatabase(const gateway::Scenario& scenario, const Schema& schema, bool held = false)
      : path_(env::fresh_database_path()) {
    env::create_seeded_database(path_, fmt::format("floor {} {}", scenario.name, schema.setup_sql), [&](sqlite3* conn) {
      std::vector<env::SeedOrder> orders;
      for (const auto& o : scenario.orders) orders.push_back({o.order_no, o.user, o.amount, o.currency});
      (void)env::seed_database(conn, schema, orders);
    });
    std::ifstream in(path_, std::ios::binary);
    image_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    if (held) {  // before any connection opens: those opened earlier are not held
      held_ = env::hold_in_memory(path_, image_);
    }
  }
  ~FloorDatabase() {
    for (auto& [task, c] : connections_) {
      for (auto& [sql, stmt] : c.statements) sqlite3_finalize(stmt);
      sqlite3_close(c.handle);
    }
    ::close(fd_);
    held_.reset();
    env::remove_database(path_);
  }
  bool reset() {
    if (image_.size() < 100) return false;
    // One past the counter the last pass left (each commit raised it), as
    // RunDatabase stamps: a connection that saw the file after that pass's
    // last commit must see a counter it never saw, or it keeps its cache
    // (the floors before session 12 stamped their own count plus one, which
    // a pass with one commit had already reached: later passes ran on stale
    // pages, a duplicate's INSERT succeeding where the run's failed).
    unsigned char now[4] = {0, 0, 0, 0};
    if (held_) {
      const std::string& bytes = held_->bytes();
      if (bytes.size() >= 28) std::memcpy(now, bytes.data() + 24, 4);
    } else if (::pread(fd_, now, 4, 24) != 4) {
      return false;
    }
    const std::uint32_t left = (std::uint32_t{now[0]} << 24) | (std::uint32_t{now[1]} << 16) |
                               (std::uint32_t{now[2]} << 8) | std::uint32_t{now[3]};
    counter_ = std::max(counter_, left) + 1;
    char stamp[4];
    for (int b = 0; b < 4; ++b) stamp[b] = static_cast<char>(counter_ >> (24 - 8 * b));
    if (held_) {  // as RunDatabase: the chunks the pass wrote copied back, then the header stamped
      held_->restore(image_);
      for (std::size_t at : {std::size_t{24}, std::size_t{92}}) held_->write(at, stamp, sizeof stamp);
      return true;
    }
    for (std::size_t at : {std::size_t{24}, std::size_t{92}}) image_.replace(at, 4, stamp, 4);
    return ::pwrite(fd_, image_.data(), image_.size(), 0) == static_cast<ssize_t>(image_.size()) &&
           ::ftruncate(fd_, static_cast<off_t>(image_.size())) == 0;
  }
  struct Connection {
    sqlite3* handle = nullptr;
    std::map<std::string, sqlite3_stmt*> statements;
  };
  Connection& connection(int task) {
    Connection& c = connections_[task];
    if (!c.handle) c.handle = env::open_database(path_);
    return c;
  }
  // `sql` on task `task`'s connection, prepared on first use and kept.
  sqlite3_stmt* statement(int task, const std::string& sql) {
    Connection& c = connection(task);
    auto it = c.statements.find(sql);
    if (it == c.statements.end()) {
      sqlite3_stmt* stmt = nullptr;
      sqlite3_prepare_v2(c.handle, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
      it = c.statements.emplace(sql, stmt).first;
    }
    return it->second;
  }

 private:
  std::string path_;
  std::string image_;
  int fd_ = -1;
  std::shared_ptr<env::HeldBytes> held_;  // null: the file is the kernel's
  std::uint32_t counter_ = 1u << 30;  // past any count a seeding reaches
  std::map<int, Connection> connections_;
};

// Runs `stmt` to its end and resets it: SQLite's work, no row read out.
void step_through(sqlite3_stmt* stmt) {
  while (sqlite3_step(stmt) == SQLITE_ROW) {
  }
  sqlite3_reset(stmt);
}

void floor(benchmark::State& state, bool held) {
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  const auto per_task = statements_per_task(scenario, *handler);
  const auto instance = handler->make();
  FloorDatabase db(scenario, instance->schema(), held);
  std::size_t statements = 0;
  for (auto _ : state) {
    if (!db.reset()) return state.SkipWithError("cannot reset the floor's database");
    statements = 0;
    // Task after task, each on its own connection (open after the first
    // pass), each statement prepared once per connection.
    for (const auto& [task, texts] : per_task) {
      for (const auto& sql : texts) {
        // Errors are part of the work: a duplicate's INSERT fails on the UNIQUE key in the run too.
        step_through(db.statement(task, sql));
        ++statements;
      }
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["statements"] = static_cast<double>(statements);
}
// The statements of the first `n` schedules BM_SchedulesPerSecond/
// unique_key_cas runs (seeds derive_seed(1, i), untraced there; traced here
// to read them), each schedule's in the order its tasks ran them, the busy
// attempts left out as in BM_Floor.
std::vector<std::vector<std::pair<int, std::string>>> schedules_statements(const gateway::Scenario& scenario,
                                                                           const HandlerInfo& handler, int n) {
  std::vector<std::vector<std::pair<int, std::string>>> out;
  for (int i = 0; i < n; ++i) {
    const run::RunResult r = run::simulate(run::RunSpec{&scenario, &handler, sim::StrategySpec{},
                                                        sim::derive_seed(1, static_cast<std::uint64_t>(i)),
                                                        std::nullopt, true})
                                 .value();
    auto& order = out.emplace_back();
    for (const auto& e : r.trace.events())
      if (e.kind == sim::TraceKind::kSql && !e.result.starts_with("SQLITE_BUSY")) order.emplace_back(e.task, e.text);
  }
  return out;
}

// Each statement of `schedules` prepared on the connection it names (or
// found there), in their order; null where one does not prepare. Called while
// no connection holds a lock: a prepare that must read the schema meets a
// COMMIT's PENDING lock as SQLITE_BUSY.
std::vector<std::vector<sqlite3_stmt*>> prepare_all(FloorDatabase& db,
                                                    const std::vector<std::vector<std::pair<int, std::string>>>& schedules) {
  std::vector<std::vector<sqlite3_stmt*>> prepared;
  for (const auto& order : schedules) {
    auto& stmts = prepared.emplace_back();
    for (const auto& [connection, sql] : order) stmts.push_back(db.statement(connection, sql));
  }
  return prepared;
}

// Each iteration: the database reset in place, then the next of `schedules`
// in turn, each statement on the connection it names, then `then()`.
void replay_in_turn(benchmark::State& state, FloorDatabase& db,
                    const std::vector<std::vector<std::pair<int, std::string>>>& schedules,
                    const std::function<void()>& then = {}) {
  // Each statement prepared (or found) before the timed loop: in it, only
  // SQLite's work and the reset, no lookup by text.
  const auto prepared = prepare_all(db, schedules);
  double statements = 0;
  std::size_t k = 0;
  for (auto _ : state) {
    if (!db.reset()) return state.SkipWithError("cannot reset the floor's database");
    const auto& order = prepared[k++ % prepared.size()];
    for (sqlite3_stmt* stmt : order) step_through(stmt);
    if (then) then();
    statements += static_cast<double>(order.size());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["statements"] = statements / static_cast<double>(state.iterations());
}

// BM_FloorSeeds: BM_FloorHeld over the same schedules the rate benchmark
// runs, in their own interleaving. BM_FloorSeedsChecked: the same, plus the
// SQL the checker cannot do without, on a connection of its own as a run's
// checker has: credits_sql once (the ack-time read, whose answer the
// quiescent read takes again when nothing committed after the ack, as in
// every schedule of this cell), then the schema's other oracle queries in one
// read transaction. What a schedule with its verdict cannot cost less than.
void floor_seeds(benchmark::State& state, bool checked) {
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  constexpr int kSchedules = 200;
  const auto schedules = schedules_statements(scenario, *handler, kSchedules);
  const auto instance = handler->make();
  const Schema& schema = instance->schema();
  FloorDatabase db(scenario, schema, true);
  constexpr int kChecker = -1;  // the checker's connection, apart from every task's
  std::vector<std::string> oracles;
  for (const std::string* sql : {&schema.refunds_sql, &schema.reversals_sql, &schema.payloads_sql,
                                 &schema.statuses_sql, &schema.transitions_sql, &schema.balances_sql})
    if (!sql->empty()) oracles.push_back(*sql);
  replay_in_turn(state, db, schedules, [&] {
    if (!checked) return;
    step_through(db.statement(kChecker, schema.credits_sql));
    step_through(db.statement(kChecker, "BEGIN"));
    for (const auto& sql : oracles) step_through(db.statement(kChecker, sql));
    step_through(db.statement(kChecker, "COMMIT"));
  });
}
void BM_FloorSeeds(benchmark::State& state) { floor_seeds(state, false); }
BENCHMARK(BM_FloorSeeds)->UseRealTime();
void BM_FloorSeedsChecked(benchmark::State& state) { floor_seeds(state, true); }
BENCHMARK(BM_FloorSeedsChecked)->UseRealTime();

// BM_FloorEverything: every statement SQLite stepped in the schedules the
// rate benchmark runs, as SQLite saw it, each on the connection it ran on.
// Taken with sqlite3_trace_v2 (SQLITE_TRACE_STMT: the text with its bound
// values expanded) on every connection a capture thread's runs opened, so
// unlike the trace-based floors above it has the tasks' statements whole
// (the trace cuts values past 64 characters: a callback's payload), the
// attempts that met SQLITE_BUSY (in the same interleaving they meet the same
// lock again), the rollback a closing task leaves, and the checker's reads
// as the checker made them (the ack-time one keyed by order). Replayed
// prepared once per connection and text, the file reset in place as a run's:
// all of SQLite's work in a schedule, and nothing of twice's.
struct Stepped {
  sqlite3* connection;
  std::string sql;
  sqlite3_int64 changes_before;  // sqlite3_total_changes64() of its connection as it began
};
thread_local std::vector<Stepped>* statement_tap = nullptr;

int tap_statement(unsigned type, void*, void* p, void* x) {
  if (type != SQLITE_TRACE_STMT || !statement_tap) return 0;
  if (static_cast<const char*>(x)[0] == '-' && static_cast<const char*>(x)[1] == '-') return 0;  // a trigger's, inside a statement
  auto* stmt = static_cast<sqlite3_stmt*>(p);
  sqlite3* db = sqlite3_db_handle(stmt);
  char* sql = sqlite3_expanded_sql(stmt);
  if (sql) statement_tap->push_back({db, sql, sqlite3_total_changes64(db)});
  sqlite3_free(sql);
  return 0;
}

int tap_connection(sqlite3* db, char**, const sqlite3_api_routines*) {
  sqlite3_trace_v2(db, SQLITE_TRACE_STMT, tap_statement, nullptr);
  return SQLITE_OK;
}

using Schedules = std::vector<std::vector<std::pair<int, std::string>>>;

// What each statement changed, as far as the next statement on its
// connection in the same schedule tells (-1: no next one to tell).
template <typename ChangesBefore>
std::vector<sqlite3_int64> changes_made(const std::vector<std::pair<int, std::string>>& order, ChangesBefore before) {
  std::vector<sqlite3_int64> made(order.size(), -1);
  std::map<int, std::size_t> last;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int c = order[k].first;
    if (auto it = last.find(c); it != last.end()) made[it->second] = before(k) - before(it->second);
    last[c] = k;
  }
  return made;
}

// Every statement SQLite stepped in the first `n` schedules of `handler` on
// `scenario` (seeds derive_seed(1, i), as BM_SchedulesPerSecond and BM_Growth
// run them), each with the place of its connection; `made` gets what each changed.
Schedules everything_stepped(const gateway::Scenario& scenario, const HandlerInfo& handler, int n,
                             std::vector<std::vector<sqlite3_int64>>& made) {
  Schedules out;
  using EntryPoint = void (*)();
  // sqlite3_auto_extension() initializes SQLite: twice's settings first, as
  // in a run (they are refused once SQLite has initialized).
  env::apply_sqlite_settings();
  sqlite3_auto_extension(reinterpret_cast<EntryPoint>(&tap_connection));
  // A thread of its own, so that every connection its runs use (a thread's
  // pool and checker) opens now, with the tap; every schedule run once first,
  // so that the pool has all the connections they need open and their
  // opening statements are not a schedule's.
  std::thread capture([&] {
    std::vector<Stepped> stepped;
    std::map<sqlite3*, int> place;
    auto run = [&](std::uint64_t i) {
      (void)run::simulate(run::RunSpec{&scenario, &handler, sim::StrategySpec{}, sim::derive_seed(1, i), std::nullopt, false})
          .value();
    };
    for (int i = 0; i < n; ++i) run(static_cast<std::uint64_t>(i));
    for (int i = 0; i < n; ++i) {
      stepped.clear();
      statement_tap = &stepped;
      run(static_cast<std::uint64_t>(i));
      statement_tap = nullptr;
      auto& order = out.emplace_back();
      for (auto& s : stepped) order.emplace_back(place.emplace(s.connection, static_cast<int>(place.size())).first->second, s.sql);
      made.push_back(changes_made(order, [&](std::size_t k) { return stepped[k].changes_before; }));
    }
  });
  capture.join();
  sqlite3_cancel_auto_extension(reinterpret_cast<EntryPoint>(&tap_connection));
  return out;
}

// Whether each schedule, replayed once on `db`, changes what the run changed,
// statement by statement: a floor whose statements meet other rows (a stale
// page, a missed reset) measures other work.
bool replays_as_run(FloorDatabase& db, const Schedules& schedules, const std::vector<std::vector<sqlite3_int64>>& made) {
  const auto prepared = prepare_all(db, schedules);
  for (std::size_t i = 0; i < schedules.size(); ++i)
    for (std::size_t k = 0; k < schedules[i].size(); ++k)
      if (!prepared[i][k]) {
        std::fprintf(stderr, "floor: cannot prepare on connection %d: %.200s\n", schedules[i][k].first,
                     schedules[i][k].second.c_str());
        return false;
      }
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    if (!db.reset()) return false;
    std::vector<sqlite3_int64> before;
    for (sqlite3_stmt* stmt : prepared[i]) {
      before.push_back(sqlite3_total_changes64(sqlite3_db_handle(stmt)));
      step_through(stmt);
    }
    const auto got = changes_made(schedules[i], [&](std::size_t k) { return before[k]; });
    if (got != made[i]) {
      for (std::size_t k = 0, shown = 0; k < got.size() && shown < 5; ++k)
        if (got[k] != made[i][k] && ++shown)
          std::fprintf(stderr, "floor: schedule %zu, statement %zu on connection %d changed %lld rows in the run, %lld here: %.120s\n",
                       i, k, schedules[i][k].first, static_cast<long long>(made[i][k]), static_cast<long long>(got[k]),
                       schedules[i][k].second.c_str());
      return false;
    }
  }
  return true;
}

void BM_FloorEverything(benchmark::State& state) {
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  std::vector<std::vector<sqlite3_int64>> made;
  const Schedules schedules = everything_stepped(scenario, *handler, 200, made);
  const auto instance = handler->make();
  FloorDatabase db(scenario, instance->schema(), true);
  if (!replays_as_run(db, schedules, made))
    return state.SkipWithError("the replayed statements changed other rows than the runs' did");
  replay_in_turn(state, db, schedules);
}
BENCHMARK(BM_FloorEverything)->UseRealTime();

void BM_Floor(benchmark::State& state) { floor(state, false); }
BENCHMARK(BM_Floor)->UseRealTime();
void BM_FloorHeld(benchmark::State& state) { floor(state, true); }
BENCHMARK(BM_FloorHeld)->UseRealTime();

void BM_FloorResetOnly(benchmark::State& state) {
  const gateway::Scenario& scenario = bundled_scenario("concurrent-duplicates");
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  const auto instance = handler->make();
  FloorDatabase db(scenario, instance->schema());
  for (auto _ : state)
    if (!db.reset()) return state.SkipWithError("cannot reset the floor's database");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FloorResetOnly)->UseRealTime();

// concurrent-duplicates without network copies, with `n` orders of `n` users.
gateway::Scenario growth_scenario(bool burst, int n) {
  gateway::Scenario s = bundled_scenario("concurrent-duplicates");
  s.name = fmt::format("{}-{}", burst ? "burst" : "spread", n);
  s.duplicate = 0;
  s.orders.clear();
  for (int i = 0; i < n; ++i) {
    gateway::OrderSpec o;
    o.order_no = fmt::format("O-{}", 3000 + i);
    o.user = fmt::format("user{}", i);
    o.amount = 1000 + i;
    o.paid_at = burst ? 0 : i * 10 * kSecond;
    s.orders.push_back(o);
  }
  return s;
}

// BM_FloorGrowth: every statement SQLite stepped in the first kSchedules
// schedules of BM_Growth's (its seeds), as BM_FloorEverything takes and
// checks them: the busy attempts included, each on the connection it ran on
// (so the floor has as many connections as the run had open, handed on as
// the run's pool hands them).
void BM_FloorGrowth(benchmark::State& state, bool burst) {
  const gateway::Scenario scenario = growth_scenario(burst, static_cast<int>(state.range(0)));
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  constexpr int kSchedules = 4;
  std::vector<std::vector<sqlite3_int64>> made;
  const Schedules schedules = everything_stepped(scenario, *handler, kSchedules, made);
  const auto instance = handler->make();
  FloorDatabase db(scenario, instance->schema(), true);
  if (!replays_as_run(db, schedules, made))
    return state.SkipWithError("the replayed statements changed other rows than the runs' did");
  replay_in_turn(state, db, schedules);
  state.counters["deliveries"] = static_cast<double>(state.range(0));
}
BENCHMARK_CAPTURE(BM_FloorGrowth, spread, false)->Arg(2)->Arg(8)->Arg(32)->Arg(128)->UseRealTime();
BENCHMARK_CAPTURE(BM_FloorGrowth, burst, true)->Arg(2)->Arg(8)->Arg(32)->Arg(128)->UseRealTime();

void BM_Growth(benchmark::State& state, bool burst) {
  const gateway::Scenario scenario = growth_scenario(burst, static_cast<int>(state.range(0)));
  const HandlerInfo* handler = find_handler("unique-key+cas");
  if (!handler) return state.SkipWithError("unique-key+cas is not registered");
  std::uint64_t i = 0;
  double steps = 0;
  for (auto _ : state) {
    const run::RunResult r =
        run::simulate(run::RunSpec{&scenario, handler, sim::StrategySpec{}, sim::derive_seed(1, i++), std::nullopt, false}).value();
    steps += r.steps;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["deliveries"] = static_cast<double>(state.range(0));
  state.counters["steps"] = steps / static_cast<double>(state.iterations());
}
BENCHMARK_CAPTURE(BM_Growth, spread, false)->Arg(2)->Arg(8)->Arg(32)->Arg(128)->UseRealTime();
BENCHMARK_CAPTURE(BM_Growth, burst, true)->Arg(2)->Arg(8)->Arg(32)->Arg(128)->UseRealTime();

}  // namespace
}  // namespace twice::bench
