#include "env/task_env.h"

#include <fmt/format.h>

namespace twice::env {

Micros TaskClock::now() {
  if (!scheduler_.killed()) {
    scheduler_.point();
    scheduler_.record(sim::EventKind::kClock, "now()", format_time(scheduler_.now()));
  }
  return scheduler_.now();
}

void TaskClock::sleep(Micros duration) {
  if (scheduler_.killed()) return;
  scheduler_.record(sim::EventKind::kClock, fmt::format("sleep({})", format_duration(duration)));
  scheduler_.sleep_for(duration);
}

TaskEnv::TaskEnv(sim::Scheduler& scheduler, LockService& locks, const std::string& database_name)
    : scheduler_(scheduler), db_(scheduler, database_name), locks_(scheduler, locks), clock_(scheduler) {}

std::string TaskEnv::token() {
  const int n = tokens_++;
  return n == 0 ? sim::task_label(scheduler_.current()) : fmt::format("{}-{}", sim::task_label(scheduler_.current()), n);
}

void TaskEnv::note(std::string_view text) { scheduler_.record(sim::EventKind::kNote, std::string(text)); }

}  // namespace twice::env
