// (d) Real-thread throughput of each correct handler (`twice stress`) against
// a raw SQLite floor: the same workload (8 threads, the two copies of each
// order released together by a barrier, one WAL file, the same busy handler)
// running unique-key+cas's statements straight on sqlite3 prepared statements,
// with no Handler, Env, Value or Result in between. Only the delivery phase
// is timed (manual time), not making and seeding the database or checking it.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <thread>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <stdlib.h>

#include <benchmark/benchmark.h>

#include "bench/bench_support.h"
#include "stress/real_env.h"
#include "stress/stress_runner.h"
#include "twice/schema.h"

namespace twice::bench {
namespace {

namespace fs = std::filesystem;

constexpr int kThreads = 8;
constexpr int kDuplicates = 2;
constexpr long kOrders = 2000;  // 4000 deliveries per iteration
constexpr Micros kBusyTimeout = 5 * kSecond;

void BM_StressThroughput(benchmark::State& state, const char* handler_name) {
  const HandlerInfo* handler = find_handler(handler_name);
  if (!handler) return state.SkipWithError("handler not registered");
  stress::StressOptions options;
  options.handler = handler;
  options.threads = kThreads;
  options.duplicates = kDuplicates;
  options.orders = kOrders;
  long deliveries = 0;
  long violations = 0;
  for (auto _ : state) {
    stress::StressReport report;
    if (const Status s = stress::run_stress(options, report); !s.ok()) return state.SkipWithError(s.message().c_str());
    state.SetIterationTime(static_cast<double>(report.elapsed) / kSecond);
    deliveries += report.deliveries;
    violations += static_cast<long>(report.verdict.violations.size());
  }
  state.SetItemsProcessed(deliveries);
  state.counters["violations"] = static_cast<double>(violations);
}
BENCHMARK_CAPTURE(BM_StressThroughput, unique_key, "unique-key")->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_StressThroughput, cas, "cas")->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_StressThroughput, unique_key_cas, "unique-key+cas")->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_StressThroughput, three_layer, "three-layer")->UseManualTime()->Iterations(3);

// One worker's prepared statements: unique-key+cas, written against sqlite3.
class RawDelivery {
 public:
  explicit RawDelivery(sqlite3* conn) : conn_(conn) {
    prepare(begin_, "BEGIN IMMEDIATE");
    prepare(commit_, "COMMIT");
    prepare(rollback_, "ROLLBACK");
    prepare(log_, "INSERT INTO callback_log(out_trade_no, event_id, transaction_id, payload) VALUES (?, ?, ?, ?)");
    prepare(load_, "SELECT user_id, amount, currency, status FROM orders WHERE order_no = ?");
    prepare(swap_, "UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'");
    prepare(ledger_, "INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)");
    prepare(balance_, "UPDATE accounts SET balance = balance + ? WHERE user_id = ?");
  }
  ~RawDelivery() {
    for (auto* s : {begin_, commit_, rollback_, log_, load_, swap_, ledger_, balance_}) sqlite3_finalize(s);
    sqlite3_close(conn_);
  }

  // True when the delivery would be acknowledged.
  bool deliver(const Notify& n) {
    if (step(begin_) != SQLITE_DONE) return false;
    text(log_, 1, n.out_trade_no);
    text(log_, 2, n.event_id);
    text(log_, 3, n.transaction_id);
    text(log_, 4, n.raw_payload);
    const int logged = step(log_);
    if ((logged & 0xff) == SQLITE_CONSTRAINT) return abort(true);
    if (logged != SQLITE_DONE) return abort(false);

    text(load_, 1, n.out_trade_no);
    if (sqlite3_step(load_) != SQLITE_ROW) {
      sqlite3_reset(load_);
      return abort(false);
    }
    const std::string user = reinterpret_cast<const char*>(sqlite3_column_text(load_, 0));
    const bool matches = sqlite3_column_int64(load_, 1) == n.amount &&
                         n.currency == reinterpret_cast<const char*>(sqlite3_column_text(load_, 2));
    sqlite3_reset(load_);
    if (!matches) return abort(false);

    text(swap_, 1, n.transaction_id);
    text(swap_, 2, n.out_trade_no);
    if (step(swap_) != SQLITE_DONE || sqlite3_changes(conn_) != 1) return abort(false);
    text(ledger_, 1, n.out_trade_no);
    text(ledger_, 2, user);
    sqlite3_bind_int64(ledger_, 3, n.amount);
    if (step(ledger_) != SQLITE_DONE) return abort(false);
    sqlite3_bind_int64(balance_, 1, n.amount);
    text(balance_, 2, user);
    if (step(balance_) != SQLITE_DONE) return abort(false);
    if (step(commit_) != SQLITE_DONE) return abort(false);
    return true;
  }

 private:
  void prepare(sqlite3_stmt*& stmt, const char* sql) { sqlite3_prepare_v2(conn_, sql, -1, &stmt, nullptr); }
  static void text(sqlite3_stmt* stmt, int i, const std::string& s) {
    sqlite3_bind_text(stmt, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  static int step(sqlite3_stmt* stmt) {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    return rc;
  }
  bool abort(bool acked) {
    step(rollback_);
    return acked;
  }

  sqlite3* conn_;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* log_ = nullptr;
  sqlite3_stmt* load_ = nullptr;
  sqlite3_stmt* swap_ = nullptr;
  sqlite3_stmt* ledger_ = nullptr;
  sqlite3_stmt* balance_ = nullptr;
};

// One floor run, as run_stress() does it: rounds of kThreads / kDuplicates
// orders, each order's copies released together. Returns the seconds the
// rounds took, or a negative number when the database could not be made.
double raw_floor_run(long& acked) {
  std::string folder = (fs::temp_directory_path() / "twice-bench-XXXXXX").string();
  if (!::mkdtemp(folder.data())) return -1;
  const std::string path = folder + "/floor.db";
  constexpr int kGroups = kThreads / kDuplicates;
  double seconds = -1;
  {
    std::string error;
    sqlite3* setup = stress::open_wal_connection(path, kBusyTimeout, error);
    if (setup && stress::seed_stress_database(setup, reference_schema(), kOrders, kGroups).ok()) {
      std::vector<Notify> notifies;
      for (long i = 0; i < kOrders; ++i) notifies.push_back(stress::stress_notify(stress::stress_order(i, kGroups)));
      std::vector<std::unique_ptr<RawDelivery>> workers;
      for (int w = 0; w < kThreads; ++w) {
        sqlite3* conn = stress::open_wal_connection(path, kBusyTimeout, error);
        if (!conn) break;
        workers.push_back(std::make_unique<RawDelivery>(conn));
      }
      if (workers.size() != kThreads) {
        workers.clear();
        sqlite3_close(setup);
        std::error_code ec;
        fs::remove_all(folder, ec);
        return -1;
      }

      std::vector<char> acks(static_cast<std::size_t>(kOrders * kDuplicates), 0);
      long round = -1;
      bool stop = false;
      std::chrono::steady_clock::time_point started;
      std::barrier barrier(kThreads, [&]() noexcept {
        if (round < 0) started = std::chrono::steady_clock::now();
        stop = (round + 1) * kGroups >= kOrders;
        if (!stop) ++round;
      });
      std::vector<std::jthread> threads;
      for (int w = 0; w < kThreads; ++w) {
        threads.emplace_back([&, w] {
          for (;;) {
            barrier.arrive_and_wait();
            if (stop) return;
            const long order = round * kGroups + w / kDuplicates;
            if (order < kOrders)
              acks[static_cast<std::size_t>(order * kDuplicates + w % kDuplicates)] =
                  workers[static_cast<std::size_t>(w)]->deliver(notifies[static_cast<std::size_t>(order)]);
          }
        });
      }
      for (auto& t : threads) t.join();
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      acked = std::count(acks.begin(), acks.end(), 1);
    }
    sqlite3_close(setup);
  }
  std::error_code ec;
  fs::remove_all(folder, ec);
  return seconds;
}

void BM_RawSqliteFloor(benchmark::State& state) {
  long deliveries = 0;
  long acked = 0;
  for (auto _ : state) {
    const double seconds = raw_floor_run(acked);
    if (seconds < 0) return state.SkipWithError("cannot create the floor's database");
    state.SetIterationTime(seconds);
    deliveries += kOrders * kDuplicates;
  }
  state.SetItemsProcessed(deliveries);
  state.counters["acked_last"] = static_cast<double>(acked);
}
BENCHMARK(BM_RawSqliteFloor)->UseManualTime()->Iterations(3);

}  // namespace
}  // namespace twice::bench
