// Endpoint: the merchant's process as the handler lives in it. It turns each
// Delivery into a task on the scheduler and gives the handler its Env; it
// answers as an HTTP endpoint would (an exception is a 500, an early
// respond_now() is the answer, a transaction left open is rolled back when the
// task ends); it pauses and crashes where the FaultPlan says, and refuses
// connections while down until it restarts; the queue behind it may hand a
// message over again; and it runs the background jobs (reconciler, order
// closer) in the same process.
//
// Replies leave it as values, through one narrow interface (ReplySink): the
// run's wiring carries them back over the network to the gateway. The
// endpoint knows nothing of the gateway's protocol or of the checker.
// Lives on the scheduler's thread; tasks call it while holding the baton.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "endpoint/delivery.h"
#include "env/commit_watch.h"
#include "env/gateway_port.h"
#include "env/lock_service.h"
#include "env/service_port.h"
#include "env/sqlite_db.h"
#include "fault/fault_plan.h"
#include "sim/process_faults.h"
#include "sim/scheduler.h"
#include "twice/handler.h"
#include "twice/job.h"

namespace twice::endpoint {

class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // The answer to `delivery`, once per delivery: early (respond_now, while the
  // handler still works), or when its task ends. nullopt: no answer left the
  // process (it was down, or died while working).
  virtual void replied(const Delivery& delivery, std::optional<Reply> reply, bool early) = 0;
  // A watch over the commits of task `task`, which serves the invalid
  // delivery (kInvalid) `delivery`; it lives as long as the task's Env.
  virtual std::unique_ptr<env::CommitWatch> watch_invalid(const Delivery& delivery, int task) = 0;
  // A background job's task `task` (run_job) ended; `killed`: by a crash.
  virtual void job_ended(int task, bool killed) = 0;
  // A tick of the job `job` had a statement of its own refused with an
  // error (JobEnv): it could not do its work. `why` names the statement.
  virtual void job_failed(const std::string& job, const std::string& why) = 0;
};

// What the endpoint's tasks use: the run's database connections, lock
// service and gateway API.
struct Backends {
  env::ConnectionPool& connections;
  env::LockService& locks;
  const env::GatewayPort& gateway;
  env::TaskDbSource* databases = nullptr;  // a server engine's run: where tasks open their Db
  env::ServicePort* services = nullptr;    // the run's external services (warehouse, mail, ...)
};

class Endpoint final : public sim::ProcessFaults {
 public:
  Endpoint(sim::Scheduler& scheduler, Handler& handler, Backends backends, fault::FaultPlan& faults,
           ReplySink& replies);
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // A task that serves `delivery` when it arrives. Returns the task id.
  int accept(Delivery delivery);
  // A task that runs one tick of `job` now; nullopt when the process is down.
  std::optional<int> run_job(const std::string& name, Job& job);

  bool down() const { return scheduler_.now() < down_until_; }
  // Every task the endpoint started, by id.
  const std::map<int, TaskInfo>& tasks() const { return tasks_; }
  // The same, handed over when the run is over (tasks() is empty after):
  // the run's result keeps them, and a copy was a map node and a name per task.
  std::map<int, TaskInfo> take_tasks() { return std::move(tasks_); }

  // sim::ProcessFaults
  std::optional<Micros> pause_before(int task, const std::string& pending) override;
  bool crash_before(int task, const std::string& pending) override;
  void crashed() override;

 private:
  struct Served;
  void serve(Served& served);
  void finished(Served& served, bool killed);
  void maybe_redeliver(const Delivery& delivery);

  sim::Scheduler& scheduler_;
  Handler& handler_;
  Backends backends_;
  fault::FaultPlan& faults_;
  ReplySink& replies_;
  std::map<int, TaskInfo> tasks_;
  Micros down_until_ = -1;
};

}  // namespace twice::endpoint
