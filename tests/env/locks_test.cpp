#include <gtest/gtest.h>

#include "env/lock_service.h"
#include "sim/scheduler.h"

namespace twice::env {
namespace {

TEST(Locks, SetIfAbsentHonoursOwnerAndTtlOnTheVirtualClock) {
  sim::Choices c(1);
  sim::Trace trace;
  sim::SchedulerLimits limits;
  limits.latency_min = limits.latency_max = 0;
  sim::Scheduler s({}, c, trace, limits);
  LockService service(s);
  std::vector<std::string> seen;
  s.spawn("t", 0, [&] {
    TaskLocks locks(s, service);
    seen.push_back(locks.set_if_absent("k", "A", 10 * kSecond) ? "A got it" : "A refused");
    seen.push_back(locks.set_if_absent("k", "B", 10 * kSecond) ? "B got it" : "B refused");
    seen.push_back(locks.compare_and_delete("k", "B") ? "B deleted" : "B may not delete");
    seen.push_back("owner " + locks.get("k").value_or("none"));
    s.sleep_for(11 * kSecond);  // A's lock expires meanwhile
    seen.push_back("owner " + locks.get("k").value_or("none"));
    seen.push_back(locks.set_if_absent("k", "B", 10 * kSecond) ? "B got it" : "B refused");
    seen.push_back(locks.del("k") ? "plain DEL removed it" : "nothing to DEL");
  });
  s.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"A got it", "B refused", "B may not delete", "owner A", "owner none",
                                            "B got it", "plain DEL removed it"}));
}

}  // namespace
}  // namespace twice::env
