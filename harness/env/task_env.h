// TaskEnv: the Env handed to one delivery (or background job) task: its own
// database connection, the run's lock service, the virtual clock.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "env/gateway_port.h"
#include "env/lock_service.h"
#include "env/sqlite_db.h"
#include "env/task_db.h"
#include "sim/scheduler.h"
#include "twice/env.h"

namespace twice::engine {
class PgRun;
}

namespace twice::env {

class TaskClock final : public Clock {
 public:
  explicit TaskClock(sim::Scheduler& scheduler) : scheduler_(scheduler) {}
  Micros now() override;
  void sleep(Micros duration) override;

 private:
  sim::Scheduler& scheduler_;
};

// What a task's Env is wired to. `respond` sends an early response (nullptr:
// respond_now() is refused with a note in the trace).
struct TaskServices {
  sim::Scheduler& scheduler;
  LockService& locks;
  ConnectionPool& connections;
  const GatewayPort& gateway;
  std::function<void(const Reply&)> respond;
  // Set when the run's database is on PostgreSQL: tasks get a PgDb on it
  // instead of a SQLite connection from `connections`.
  engine::PgRun* postgres = nullptr;
};

class TaskEnv final : public Env {
 public:
  explicit TaskEnv(TaskServices services);
  Db& db() override { return *db_; }
  Locks& locks() override { return locks_; }
  Clock& clock() override { return clock_; }
  std::string token() override;
  void note(std::string_view text) override;
  Status verify(const Notify& notify) override;
  std::optional<Notify> query_payment(std::string_view out_trade_no) override;
  void respond_now(const Reply& reply) override;

  bool in_transaction() const { return db_->in_transaction(); }
  bool committed_writes() const { return db_->committed_writes(); }
  bool responded() const { return responded_; }

 private:
  sim::Scheduler& scheduler_;
  const GatewayPort& gateway_;
  std::function<void(const Reply&)> respond_;
  bool responded_ = false;
  std::unique_ptr<TaskDb> db_;
  TaskLocks locks_;
  TaskClock clock_;
  int tokens_ = 0;
};

}  // namespace twice::env
