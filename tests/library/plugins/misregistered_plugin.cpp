// A plugin whose registrations twice must refuse, one mistake per build
// (tests/library builds this file once per MISTAKE):
//   1: a job named like one of twice's own ("reconciler"),
//   2: a handler with an empty name,
//   3: one handler name registered twice in the plugin.
// Its handler itself is never run.
#include "twice/handler.h"
#include "twice/job.h"

namespace {

class Acks final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override { return twice::Reply::success(); }
};

class Idle final : public twice::Job {
 public:
  explicit Idle(twice::Micros) {}
  twice::Micros interval() const override { return 60 * twice::kSecond; }
  void run(twice::Env&, twice::Handler&) override {}
};

}  // namespace

#if MISTAKE == 1
TWICE_REGISTER_HANDLER(Acks, "plugin-with-a-taken-job", "acks everything");
TWICE_REGISTER_JOB(Idle, "reconciler", "named like twice's own reconciler");
#elif MISTAKE == 2
TWICE_REGISTER_HANDLER(Acks, "", "has no name");
#elif MISTAKE == 3
TWICE_REGISTER_HANDLER(Acks, "plugin-twice-named", "registered ...");
TWICE_REGISTER_HANDLER(Acks, "plugin-twice-named", "... twice");
#endif
