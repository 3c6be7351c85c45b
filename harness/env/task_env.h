// TaskEnv: the Env handed to one delivery (or background job) task: its own
// database connection, the run's lock service, the virtual clock.
#pragma once

#include <string>

#include "env/lock_service.h"
#include "env/sqlite_db.h"
#include "sim/scheduler.h"
#include "twice/env.h"

namespace twice::env {

class TaskClock final : public Clock {
 public:
  explicit TaskClock(sim::Scheduler& scheduler) : scheduler_(scheduler) {}
  Micros now() override;
  void sleep(Micros duration) override;

 private:
  sim::Scheduler& scheduler_;
};

class TaskEnv final : public Env {
 public:
  TaskEnv(sim::Scheduler& scheduler, LockService& locks, const std::string& database_name);
  Db& db() override { return db_; }
  Locks& locks() override { return locks_; }
  Clock& clock() override { return clock_; }
  std::string token() override;
  void note(std::string_view text) override;
  bool in_transaction() const { return db_.in_transaction(); }

 private:
  sim::Scheduler& scheduler_;
  SqliteDb db_;
  TaskLocks locks_;
  TaskClock clock_;
  int tokens_ = 0;
};

}  // namespace twice::env
