#include "sim/trace.h"

#include <fmt/format.h>

namespace twice::sim {

const char* kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kGateway: return "event";
    case EventKind::kTask: return "task";
    case EventKind::kSql: return "sql";
    case EventKind::kLock: return "lock";
    case EventKind::kClock: return "clock";
    case EventKind::kCall: return "call";
    case EventKind::kNote: return "note";
    case EventKind::kFault: return "fault";
    case EventKind::kService: return "svc";
  }
  return "?";
}

std::string task_label(int task) { return task == 0 ? "gw" : fmt::format("T{}", task); }

std::string format_event(const TraceEvent& e) {
  std::string line = fmt::format("[{:>12}] {:<4} {:<5} {}", format_time(e.time), task_label(e.task),
                                 kind_name(e.kind), e.text);
  if (!e.result.empty()) line += " -> " + e.result;
  return line;
}

std::string format_trace(const Trace& trace) {
  std::string out;
  for (const auto& e : trace.events()) {
    out += format_event(e);
    out += '\n';
  }
  return out;
}

}  // namespace twice::sim
