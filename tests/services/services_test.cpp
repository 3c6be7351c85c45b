// Services: what an external service applies and answers, as recorded by the
// harness. Called outside any task (the scheduler's side), with the fault
// draws given explicitly: 999'999 fires a site, 0 does not.
#include "services/services.h"

#include <gtest/gtest.h>

namespace twice::services {
namespace {

struct Fixture {
  explicit Fixture(std::vector<gateway::ServiceSpec> s, std::vector<std::uint64_t> draws = {})
      : specs(std::move(s)), rates(rates_of(specs)), choices(std::move(draws)) {}
  static fault::FaultRates rates_of(const std::vector<gateway::ServiceSpec>& specs) {
    fault::FaultRates r;
    r.services = fault_rates(specs);
    return r;
  }
  std::vector<gateway::ServiceSpec> specs;
  fault::FaultRates rates;
  sim::Choices choices;
  sim::Trace trace;
  sim::Scheduler scheduler{{}, choices, trace, sim::SchedulerLimits{}};
  fault::FaultPlan faults{rates, scheduler};
  Services services{specs, scheduler, faults};
};

gateway::ServiceSpec warehouse() { return gateway::builtin_services()[0]; }

ServiceRequest ship(std::string order, std::string key = {}) { return {"ship", std::move(order), {}, std::move(key)}; }

TEST(Services, WithoutFaultsAppliesEachCallOnceAndDrawsNothing) {
  Fixture f({warehouse()});
  EXPECT_TRUE(f.services.call("warehouse", ship("O-1")).ok());
  EXPECT_TRUE(f.services.call("warehouse", ship("O-1")).ok()) << "no key: a second call is a second shipment";
  ASSERT_EQ(f.services.applied().size(), 2u);
  EXPECT_EQ(f.services.applied()[0].order_no, "O-1");
  EXPECT_EQ(f.services.applied()[0].effect, "ship");
  EXPECT_TRUE(f.choices.consumed().empty()) << "a service without faults must not consume a choice";
}

TEST(Services, AKeySeenBeforeGetsTheFirstAnswerAndAppliesNothing) {
  Fixture f({warehouse()});
  const ServiceReply first = f.services.call("warehouse", ship("O-1", "k1"));
  const ServiceReply again = f.services.call("warehouse", ship("O-1", "k1"));
  EXPECT_TRUE(again.ok());
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(f.services.applied().size(), 1u);
  EXPECT_TRUE(f.services.call("warehouse", ship("O-1", "k2")).ok());
  EXPECT_EQ(f.services.applied().size(), 2u) << "another key is another request";
}

TEST(Services, AServiceThatIgnoresKeysAppliesEveryRequest) {
  gateway::ServiceSpec w = warehouse();
  w.idempotency_keys = false;
  Fixture f({w});
  (void)f.services.call("warehouse", ship("O-1", "k1"));
  (void)f.services.call("warehouse", ship("O-1", "k1"));
  EXPECT_EQ(f.services.applied().size(), 2u);
}

TEST(Services, ATimeoutComesAfterTheEffectAndAnUnavailableServiceAppliesNothing) {
  gateway::ServiceSpec w = warehouse();
  w.timeout = 0.5;
  w.unavailable = 0.5;
  // Call 1: available (0), times out (high). Call 2: unavailable (high).
  Fixture f({w}, {0, 999'999, 999'999});
  const ServiceReply timed_out = f.services.call("warehouse", ship("O-1", "k"));
  EXPECT_FALSE(timed_out.ok());
  EXPECT_NE(timed_out.status.message().find("timed out"), std::string::npos);
  EXPECT_EQ(f.services.applied().size(), 1u) << "the warehouse shipped although the caller saw a timeout";
  const ServiceReply down = f.services.call("warehouse", ship("O-2"));
  EXPECT_NE(down.status.message().find("unavailable"), std::string::npos);
  EXPECT_EQ(f.services.applied().size(), 1u);
  EXPECT_EQ(f.faults.fired(fault::FaultSite::kServiceTimeout), 1);
  EXPECT_EQ(f.faults.fired(fault::FaultSite::kServiceUnavailable), 1);
}

TEST(Services, ARequestThatArrivesTwiceIsAppliedTwiceUnlessItsKeyDedupesIt) {
  gateway::ServiceSpec w = warehouse();
  w.duplicate = 0.5;
  Fixture f({w}, {999'999, 999'999});
  (void)f.services.call("warehouse", ship("O-1"));
  EXPECT_EQ(f.services.applied().size(), 2u);
  (void)f.services.call("warehouse", ship("O-2", "k"));
  EXPECT_EQ(f.services.applied().size(), 3u) << "the copy carries the key the first one stored";
}

TEST(Services, StockRefusesAtZeroAndAWriteThatLowersItAppliesThatManyDecrements) {
  gateway::ServiceSpec inv = gateway::builtin_services()[2];
  inv.stock = 3;
  Fixture f({inv});
  EXPECT_TRUE(f.services.call("inventory", {"write", "O-1", "1", {}}).ok());
  EXPECT_EQ(f.services.applied().size(), 2u) << "3 -> 1 is two decrements for O-1";
  EXPECT_EQ(f.services.call("inventory", {"read", "O-2", {}, {}}).body, "qty 1");
  EXPECT_TRUE(f.services.call("inventory", {"decrement", "O-2", {}, {}}).ok());
  const ServiceReply refused = f.services.call("inventory", {"decrement", "O-3", {}, {}});
  EXPECT_NE(refused.status.message().find("out of stock"), std::string::npos);
  EXPECT_EQ(f.services.applied().size(), 3u);
  EXPECT_FALSE(f.services.call("inventory", {"write", "O-4", "many", {}}).ok());
}

TEST(Services, AnUnknownServiceOrEffectIsAnErrorAndAppliesNothing) {
  Fixture f({warehouse()});
  EXPECT_FALSE(f.services.call("courier", ship("O-1")).ok());
  EXPECT_FALSE(f.services.call("warehouse", {"mail", "O-1", {}, {}}).ok());
  EXPECT_FALSE(f.services.call("warehouse", {"read", "O-1", {}, {}}).ok()) << "only a stock-keeping service reads";
  EXPECT_TRUE(f.services.applied().empty());
}

}  // namespace
}  // namespace twice::services
