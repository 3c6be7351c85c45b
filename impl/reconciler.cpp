// reconciler: every 10 minutes, asks the gateway about each order still
// waiting after 30 minutes (WeChat query-order, alipay.trade.query) and
// applies the answer through the handler's own idempotent path, as if it were
// the callback: a paid answer credits; a refunded one (the gateway gave the
// payment back before anyone credited it) is the handler's refund path, which
// credits nothing. Covers the callbacks that never come.
#include "twice/job.h"

namespace twice::impl {
namespace {

class Reconciler final : public Job {
 public:
  explicit Reconciler(Micros older_than) : older_than_(older_than) {}
  Micros interval() const override { return 10 * kMinute; }
  void run(Env& env, Handler& handler) override {
    const Micros now = env.clock().now();
    const Result waiting = env.db().exec(
        "SELECT order_no FROM orders WHERE status = 'WAIT_PAY' AND created_at <= ? ORDER BY order_no", {now - older_than_});
    for (const auto& row : waiting.rows) {
      if (auto answer = env.query_payment(row[0].as_text())) handler.handle(*answer, env);
    }
  }

 private:
  Micros older_than_;
};

}  // namespace
}  // namespace twice::impl

TWICE_REGISTER_JOB(twice::impl::Reconciler, "reconciler",
                   "every 10 min, queries the gateway for orders waiting over 30 min; applies through the handler");

// Named by the test API (harness/testing/exactly_once.cpp), whose static
// library holds this file too: naming it links the file, and so the job's
// registration, into a test program.
namespace twice::impl {
extern const int kReconcilerLinked;
const int kReconcilerLinked = 1;
}  // namespace twice::impl
