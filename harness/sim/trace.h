// Trace: every scheduling point of a run, in the order it happened.
//
// A trace is data, rendered by format_trace(). Two runs of the same (scenario,
// handler, strategy, seed) give equal traces, byte for byte: nothing in it
// depends on addresses, wall-clock time or thread identity.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "twice/time.h"

namespace twice::sim {

enum class TraceKind {
  kGateway,  // the gateway sent, timed out, retried, got a reply
  kTask,     // a task started, finished, was killed
  kSql,      // a statement and its result
  kLock,     // a lock-service operation
  kClock,    // the handler read the clock or slept
  kCall,     // the handler called the gateway: verify a signature, query a payment
  kNote,     // a line the handler wrote with Env::note
  kFault,    // an injected fault
  kService,  // an external service acted on a task's call: "warehouse: ship O-1" (its text starts with the service)
};

struct TraceEvent {
  Micros time = 0;
  int task = 0;  // 0: the gateway or the scheduler; otherwise the task id (T1, T2, ...)
  TraceKind kind = TraceKind::kGateway;
  std::string text;    // what happened: the SQL with its parameters, "delivers ..."
  std::string result;  // what it returned; empty when nothing
};

// Recording is on unless switched off. The explorer switches it off for the
// many runs whose trace nobody reads; then add() keeps nothing, and the code
// that builds an event's text asks recording() first and skips it. What a run
// does never depends on its trace, so the run is the same either way.
class Trace {
 public:
  void add(TraceEvent e) {
    if (!recording_) return;
    if (listener_) listener_(e);
    events_.push_back(std::move(e));
  }
  const std::vector<TraceEvent>& events() const { return events_; }
  void clear() { events_.clear(); }
  bool recording() const { return recording_; }
  void set_recording(bool on) { recording_ = on; }
  // Called with each event recorded, as it is added (`twice replay` prints
  // them as they come, so that a run that crashes shows what came before).
  void set_listener(std::function<void(const TraceEvent&)> listener) { listener_ = std::move(listener); }

 private:
  std::vector<TraceEvent> events_;
  std::function<void(const TraceEvent&)> listener_;
  bool recording_ = true;
};

const char* kind_name(TraceKind kind);
std::string task_label(int task);  // "gw" or "T3"
// One line per event: "[   0.012s] T1  sql   SELECT ... -> 1 row ('WAIT_PAY')".
std::string format_event(const TraceEvent& e);
std::string format_trace(const Trace& trace);

}  // namespace twice::sim
