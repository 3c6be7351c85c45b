#include "sim/trace.h"

#include <fmt/format.h>

namespace twice::sim {

const char* kind_name(TraceKind kind) {
  switch (kind) {
    case TraceKind::kGateway: return "event";
    case TraceKind::kTask: return "task";
    case TraceKind::kSql: return "sql";
    case TraceKind::kLock: return "lock";
    case TraceKind::kClock: return "clock";
    case TraceKind::kCall: return "call";
    case TraceKind::kNote: return "note";
    case TraceKind::kFault: return "fault";
    case TraceKind::kService: return "svc";
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
