// JobEnv: the Env one tick of a background job (reconciler, order closer,
// outbox relay) runs with. It hands everything to the task's own Env and
// watches the tick's statements: the first one the database refuses with
// an error (Status::Code::kError: a missing table, a column that is not there,
// a syntax error), rather than as a lost race, means the job cannot do its
// work on this handler's tables. Left unsaid, every tick would fail and the
// scenario would pass vacuously (the reconciler's "no such table: orders" on
// a handler with its own Schema); the run reports it as job_failed instead.
//
// The handler a job calls (the reconciler applies a payment through it) runs
// with the same Env, and its statements are watched too: the job gets the
// handler itself, not a stand-in, since a job may ask what the handler is
// (effect-repair's dynamic_cast to RepairableEffects). A refusal there is
// named by its statement all the same.
// Lives on one task's fiber, for one tick.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "twice/env.h"

namespace twice::endpoint {

class JobEnv final : public Env {
 public:
  explicit JobEnv(Env& task_env);
  JobEnv(const JobEnv&) = delete;
  JobEnv& operator=(const JobEnv&) = delete;

  // The job's first statement the database refused with an error, and why:
  // "`SELECT ... FROM orders ...`: no such table: orders". nullopt: none.
  const std::optional<std::string>& failure() const { return failure_; }

  // Env
  Db& db() override { return db_; }
  Locks& locks() override { return inner_.locks(); }
  Clock& clock() override { return inner_.clock(); }
  std::string token() override { return inner_.token(); }
  void note(std::string_view text) override { inner_.note(text); }
  Status verify(const Notify& notify) override { return inner_.verify(notify); }
  std::optional<Notify> query_payment(std::string_view out_trade_no) override {
    return inner_.query_payment(out_trade_no);
  }
  void respond_now(const Reply& reply) override { inner_.respond_now(reply); }
  ServiceReply call(std::string_view service, const ServiceRequest& request) override {
    return inner_.call(service, request);
  }

 private:
  class WatchedDb final : public Db {
   public:
    explicit WatchedDb(JobEnv& env) : env_(env) {}
    Result exec(std::string_view sql, std::initializer_list<Value> params) override;
    Result exec(std::string_view sql, const std::vector<Value>& params) override;
    Engine engine() const override { return env_.inner_.db().engine(); }

   private:
    JobEnv& env_;
  };
  void saw(std::string_view sql, const Status& status);

  Env& inner_;
  WatchedDb db_;
  bool lost_a_race_ = false;  // a retryable error came first: what follows may be its echo
  std::optional<std::string> failure_;
};

}  // namespace twice::endpoint
