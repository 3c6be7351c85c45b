#include "endpoint/endpoint.h"

#include <exception>
#include <memory>

#include <fmt/format.h>

#include "endpoint/http_answer.h"
#include "endpoint/job_env.h"
#include "env/task_env.h"

namespace twice::endpoint {

namespace {

std::string describe_reply(const Reply& r) {
  std::string body = r.body.size() > 60 ? r.body.substr(0, 57) + "..." : r.body;
  return fmt::format("HTTP {} {}", r.http_status, body);
}

}  // namespace

// One delivery in service: what its task answered, and whether the answer
// already left early.
struct Endpoint::Served final : env::Responder {
  Served(Endpoint& e, Delivery&& d) : endpoint(e), delivery(std::move(d)) {}
  void respond_now(const Reply& r) override {
    sent = true;
    endpoint.replies_.replied(delivery, r, /*early=*/true);
  }
  Endpoint& endpoint;
  Delivery delivery;
  std::optional<Reply> reply;
  bool sent = false;
};

Endpoint::Endpoint(sim::Scheduler& scheduler, Handler& handler, Backends backends, fault::FaultPlan& faults,
                   ReplySink& replies)
    : scheduler_(scheduler), handler_(handler), backends_(backends), faults_(faults), replies_(replies) {}

int Endpoint::accept(Delivery delivery) {
  auto served = std::make_shared<Served>(*this, std::move(delivery));
  const Delivery& d = served->delivery;
  // The body owns the Served; on_finish, which the task keeps as long as its
  // body (Scheduler::spawn), holds a plain pointer: two pointers fit inside a
  // std::function, a shared_ptr beside `this` is an allocation per delivery.
  Served* const finishing = served.get();
  const int id = scheduler_.spawn(
      d.task_name, d.at, [this, served] { serve(*served); },
      [this, finishing](bool killed) { finished(*finishing, killed); });
  tasks_[id] = TaskInfo{d.task_name, d.notify.out_trade_no};
  return id;
}

void Endpoint::serve(Served& served) {
  if (down()) {
    scheduler_.record(sim::TraceKind::kTask, "connection refused: the process is down");
    return;  // no answer: the gateway times out
  }
  // An invalid delivery's task is watched: the checker judges each of its
  // commits against the gateway's ledger (accepted_invalid).
  const std::unique_ptr<env::CommitWatch> watch = served.delivery.kind == DeliveryKind::kInvalid
                                                      ? replies_.watch_invalid(served.delivery, scheduler_.current())
                                                      : nullptr;
  env::TaskEnv env(env::TaskServices{scheduler_, backends_.locks, backends_.connections, backends_.gateway, &served,
                                     backends_.databases, backends_.services, watch.get()});
  std::string failure;
  const Reply r = answer<sim::TaskKilled>(handler_, served.delivery.notify, env, &failure);
  if (!failure.empty()) scheduler_.record(sim::TraceKind::kTask, failure);
  if (scheduler_.killed()) {
    // The process died under it: no reply leaves a dead process. Say what is
    // lost; an open transaction's writes are listed as the connection closes.
    if (!env.in_transaction())
      scheduler_.record(sim::TraceKind::kTask, "no transaction was open: what it wrote before is committed");
  } else {
    if (env.in_transaction())
      scheduler_.record(sim::TraceKind::kTask, "returns with a transaction open: it is rolled back");
    if (!served.sent && scheduler_.tracing())  // no text is built for a trace nobody keeps
      scheduler_.record(sim::TraceKind::kTask, "replies " + describe_reply(r));
  }
  served.reply = r;
}

void Endpoint::finished(Served& served, bool killed) {
  if (!served.sent) replies_.replied(served.delivery, killed ? std::nullopt : served.reply, /*early=*/false);
  maybe_redeliver(served.delivery);
}

// At-least-once delivery between the endpoint and its consumer: the queue
// may hand the same message to the handler again, whatever the first did.
void Endpoint::maybe_redeliver(const Delivery& delivery) {
  if (delivery.kind == DeliveryKind::kInvalid || delivery.kind == DeliveryKind::kQueueRedelivery ||
      delivery.kind == DeliveryKind::kReplay)
    return;
  if (!faults_.fires(fault::FaultSite::kQueueRedelivery)) return;
  const Micros after = faults_.duration(fault::FaultSite::kQueueDelay);
  const Notify& notify = delivery.notify;
  const int id = accept(Delivery{notify, fmt::format("queue redelivers {}", notify.event_id), scheduler_.now() + after,
                                 DeliveryKind::kQueueRedelivery, kNoRequest, {}});
  faults_.trace(fault::FaultSite::kQueueRedelivery, [&] {
    return fmt::format("the message queue redelivers {} as {} in {}", notify.event_id, sim::task_label(id),
                       format_duration(after));
  });
}

std::optional<int> Endpoint::run_job(const std::string& name, Job& job) {
  if (down()) return std::nullopt;
  auto id = std::make_shared<int>(0);
  *id = scheduler_.spawn(
      name, scheduler_.now(),
      [this, &job, name] {
        env::TaskEnv task_env(env::TaskServices{scheduler_, backends_.locks, backends_.connections, backends_.gateway,
                                                nullptr, backends_.databases, backends_.services});
        JobEnv env(task_env);
        // Said also when a crash unwinds the tick after its failure.
        struct SayFailure {
          JobEnv& env;
          ReplySink& replies;
          const std::string& job;
          ~SayFailure() {
            if (env.failure()) replies.job_failed(job, *env.failure());
          }
        } say{env, replies_, name};
        // A tick that throws (the job, or the handler it calls) ends there, as
        // a scheduled executor logs it and runs the next tick; it must not
        // leave the task's fiber, which would end the whole process.
        try {
          job.run(env, handler_);
        } catch (const sim::TaskKilled&) {
          throw;
        } catch (const std::exception& e) {
          scheduler_.record(sim::TraceKind::kTask, fmt::format("job {} threw: {}", name, e.what()));
        } catch (...) {
          scheduler_.record(sim::TraceKind::kTask, fmt::format("job {} threw a non-standard exception", name));
        }
      },
      [this, id](bool killed) { replies_.job_ended(*id, killed); });
  tasks_[*id] = TaskInfo{name, ""};
  return *id;
}

std::optional<Micros> Endpoint::pause_before(int task, const std::string& pending) {
  if (!faults_.fires(fault::FaultSite::kPause)) return std::nullopt;
  const Micros pause = faults_.duration(fault::FaultSite::kPause);
  faults_.trace(
      fault::FaultSite::kPause, [&] { return fmt::format("pauses for {} before: {}", format_duration(pause), pending); },
      task);
  return pause;
}

bool Endpoint::crash_before(int task, const std::string& pending) {
  if (!faults_.fires(fault::FaultSite::kCrash)) return false;
  faults_.trace(
      fault::FaultSite::kCrash,
      [&] { return fmt::format("the merchant's process crashes before: {}", pending.empty() ? "(start)" : pending); },
      task);
  return true;
}

void Endpoint::crashed() {
  const Micros downtime = faults_.duration(fault::FaultSite::kRestart);
  down_until_ = scheduler_.now() + downtime;
  faults_.trace(fault::FaultSite::kRestart,
                [&] { return fmt::format("the process is down; it restarts in {}", format_duration(downtime)); });
}

}  // namespace twice::endpoint
