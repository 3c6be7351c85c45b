// Job: a background job of the merchant's process (a reconciler, an order
// closer), run by the harness every `interval` of virtual time while the
// process is up, each run in its own task with its own Env. A job may call the
// handler under test (the reconciler applies what it learns through the
// handler's own idempotent path). Register with one line:
//   TWICE_REGISTER_JOB(Reconciler, "reconciler", "queries orders still waiting after 30 min");
// Jobs are constructed once per run; run() may interleave with deliveries.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "twice/env.h"
#include "twice/handler.h"
#include "twice/registry.h"
#include "twice/time.h"

namespace twice {

class Job {
 public:
  virtual ~Job() = default;
  // How often the job runs (the first run is one interval after the start).
  virtual Micros interval() const = 0;
  virtual void run(Env& env, Handler& handler) = 0;
};

struct JobInfo {
  std::string name;
  std::string description;
  // `age` is the scenario's parameter for the job (e.g. close orders older than this).
  std::function<std::unique_ptr<Job>(Micros age)> make;
};

// The process-wide list of jobs, filled by TWICE_REGISTER_JOB (see
// twice/registry.h).
extern template class Registry<JobInfo>;
using JobRegistry = Registry<JobInfo>;

namespace detail {
struct JobRegistration {
  JobRegistration(std::string name, std::string description, std::function<std::unique_ptr<Job>(Micros)> make);
};
}  // namespace detail

}  // namespace twice

// Named by __COUNTER__ for the reason given at TWICE_REGISTER_HANDLER.
#define TWICE_REGISTER_JOB(Class, name, description)                                                \
  static const ::twice::detail::JobRegistration TWICE_CONCAT(twice_job_registration_, __COUNTER__)( \
      name, description, [](::twice::Micros age) { return std::unique_ptr<::twice::Job>(new Class(age)); })
