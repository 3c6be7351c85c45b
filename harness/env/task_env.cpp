#include "env/task_env.h"

#include <fmt/format.h>

namespace twice::env {

Micros TaskClock::now() {
  if (scheduler_.point("now()") && scheduler_.tracing()) {
    scheduler_.record(sim::TraceKind::kClock, "now()", format_time(scheduler_.now()));
  }
  return scheduler_.now();
}

void TaskClock::sleep(Micros duration) {
  // A killed task's sleep is a dead call (Scheduler::sleep_for), not traced.
  if (!scheduler_.killed() && scheduler_.tracing())
    scheduler_.record(sim::TraceKind::kClock, fmt::format("sleep({})", format_duration(duration)));
  scheduler_.sleep_for(duration);
}

TaskEnv::TaskEnv(TaskServices s)
    : scheduler_(s.scheduler),
      gateway_(s.gateway),
      responder_(s.responder),
      services_(s.services),
      commit_watch_(s.commit_watch),
      db_(s.databases ? s.databases->open() : std::make_unique<SqliteDb>(s.scheduler, s.connections)),
      locks_(s.scheduler, s.locks),
      clock_(s.scheduler) {
  db_->watch_commits(commit_watch_);
}

std::string TaskEnv::token() {
  const int n = tokens_++;
  return n == 0 ? sim::task_label(scheduler_.current()) : fmt::format("{}-{}", sim::task_label(scheduler_.current()), n);
}

void TaskEnv::note(std::string_view text) {
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kNote, std::string(text));
  scheduler_.note(std::string(text));
}

}  // namespace twice::env

namespace twice::env {

Status TaskEnv::verify(const Notify& notify) {
  if (!scheduler_.point("verify signature")) return Status::crashed();
  Status s = gateway_.verify(notify);
  if (scheduler_.tracing())
    scheduler_.record(sim::TraceKind::kCall, fmt::format("verify signature of {}", notify.event_id),
                      s.ok() ? "valid" : s.message());
  return s;
}

std::optional<Notify> TaskEnv::query_payment(std::string_view out_trade_no) {
  if (!scheduler_.point(scheduler_.tracing() ? fmt::format("query payment {}", out_trade_no) : ""))
    return std::nullopt;
  auto n = gateway_.query_payment(out_trade_no);
  if (commit_watch_) commit_watch_->asked_gateway(out_trade_no, n.has_value());
  if (scheduler_.tracing())
    scheduler_.record(sim::TraceKind::kCall, fmt::format("query gateway for {}", out_trade_no),
                      !n ? std::string("not paid")
                      : event_kind(*n) == EventKind::kRefunded
                          ? fmt::format("refunded {} {} ({})", n->refund_amount, n->currency, n->transaction_id)
                          : fmt::format("paid {} {} ({})", n->amount, n->currency, n->transaction_id));
  return n;
}

void TaskEnv::respond_now(const Reply& reply) {
  if (responded_) return;
  if (!scheduler_.point("respond")) return;
  if (!responder_) {
    scheduler_.record(sim::TraceKind::kNote, "respond_now() outside a delivery: ignored");
    return;
  }
  responded_ = true;
  if (scheduler_.tracing())
    scheduler_.record(sim::TraceKind::kTask, fmt::format("responds early: HTTP {} {}", reply.http_status, reply.body));
  responder_->respond_now(reply);
}

}  // namespace twice::env

namespace twice::env {

ServiceReply TaskEnv::call(std::string_view service, const ServiceRequest& request) {
  if (!scheduler_.point(scheduler_.tracing() ? fmt::format("call {} {} {}", service, request.effect, request.order_no)
                                             : ""))
    return {Status::crashed(), {}};
  if (!services_) {
    scheduler_.record(sim::TraceKind::kNote, fmt::format("call {}: this run has no external services", service));
    return {Status::error(fmt::format("{}: no such service", service)), {}};
  }
  ServiceReply reply = services_->call(service, request);
  if (scheduler_.tracing()) {
    std::string text = fmt::format("call {} {} {}", service, request.effect, request.order_no);
    if (!request.body.empty()) text += fmt::format(" ({})", request.body);
    if (!request.idempotency_key.empty()) text += fmt::format(" key {}", request.idempotency_key);
    scheduler_.record(sim::TraceKind::kCall, std::move(text),
                      reply.ok() ? (reply.body.empty() ? "OK" : reply.body) : reply.status.message());
  }
  return reply;
}

}  // namespace twice::env
