// order-closer: every 10 minutes, closes orders still waiting for payment
// after the scenario's close_after. A payment that arrives after the close
// must be flagged for refund by the handler, never credited or dropped.
#include "twice/job.h"

namespace twice::impl {
namespace {

class OrderCloser final : public Job {
 public:
  explicit OrderCloser(Micros older_than) : older_than_(older_than) {}
  Micros interval() const override { return 10 * kMinute; }
  void run(Env& env, Handler&) override {
    const Micros now = env.clock().now();
    env.db().exec("UPDATE orders SET status = 'CLOSED' WHERE status = 'WAIT_PAY' AND created_at <= ?",
                  {now - older_than_});
  }

 private:
  Micros older_than_;
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_JOB(twice::impl::OrderCloser, "order-closer",
                   "every 10 min, closes orders that waited longer than the scenario's close_after");

// Named by the test API (harness/testing/exactly_once.cpp), whose static
// library holds this file too: naming it links the file, and so the job's
// registration, into a test program.
namespace twice::impl {
extern const int kOrderCloserLinked;
const int kOrderCloserLinked = 1;
}  // namespace twice::impl
