// TaskEnv: the Env handed to one delivery (or background job) task: its own
// database connection, the run's lock service, the virtual clock.
#pragma once

#include <memory>
#include <string>

#include "env/commit_watch.h"
#include "env/gateway_port.h"
#include "env/lock_service.h"
#include "env/service_port.h"
#include "env/sqlite_db.h"
#include "env/task_db.h"
#include "sim/scheduler.h"
#include "twice/env.h"
#include "twice/wire.h"

namespace twice::env {

class TaskClock final : public Clock {
 public:
  explicit TaskClock(sim::Scheduler& scheduler) : scheduler_(scheduler) {}
  Micros now() override;
  void sleep(Micros duration) override;

 private:
  sim::Scheduler& scheduler_;
};

// Where Env::respond_now() sends an early response: the delivery the task
// serves. Called from the task holding the baton, at most once per task.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void respond_now(const Reply& reply) = 0;
};

// What a task's Env is wired to. `responder` takes an early response
// (nullptr, as for a background job: respond_now() is refused with a note in
// the trace).
struct TaskServices {
  sim::Scheduler& scheduler;
  LockService& locks;
  ConnectionPool& connections;
  const GatewayPort& gateway;
  Responder* responder = nullptr;
  // Set when the run's database is on a server engine: tasks open their Db
  // there instead of taking a SQLite connection from `connections`.
  TaskDbSource* databases = nullptr;
  // The run's external services (nullptr: none; every call is refused).
  ServicePort* services = nullptr;
  // Told of the task's commits and of what it asked the gateway (nullptr:
  // nobody); the checker's watch over an invalid delivery's task.
  CommitWatch* commit_watch = nullptr;
};

class TaskEnv final : public Env, public WireSource {
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
  StatusOr<WireRequest> wire(const Notify& notify) override { return gateway_.wire(notify); }
  const WireSecrets& wire_secrets() override { return gateway_.wire_secrets(); }
  ServiceReply call(std::string_view service, const ServiceRequest& request) override;

  bool in_transaction() const { return db_->in_transaction(); }
  bool committed_writes() const { return db_->committed_writes(); }

 private:
  sim::Scheduler& scheduler_;
  const GatewayPort& gateway_;
  Responder* responder_;
  ServicePort* services_;
  CommitWatch* commit_watch_;
  bool responded_ = false;
  std::unique_ptr<TaskDb> db_;
  TaskLocks locks_;
  TaskClock clock_;
  int tokens_ = 0;
};

}  // namespace twice::env
