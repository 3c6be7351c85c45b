// FaultPlan: the one place faults are drawn. A site switched off draws
// nothing (so a scenario without faults replays as before), a site that
// fires is counted and traced under its own name.
#include "fault/fault_plan.h"

#include <gtest/gtest.h>

namespace twice::fault {
namespace {

struct Fixture {
  explicit Fixture(std::vector<std::uint64_t> draws) : choices(std::move(draws)) {}
  sim::Choices choices;
  sim::Trace trace;
  sim::Scheduler scheduler{{}, choices, trace, sim::SchedulerLimits{}};
};

TEST(FaultPlan, ASiteSwitchedOffDrawsNothingAndNeverFires) {
  Fixture f({999'999, 999'999});
  FaultPlan plan(FaultRates{}, f.scheduler);
  EXPECT_FALSE(plan.fires(FaultSite::kRequestLoss));
  EXPECT_EQ(plan.copies(), 0);
  EXPECT_EQ(plan.duration(FaultSite::kDelay), 0);
  EXPECT_TRUE(f.choices.consumed().empty()) << "a zero rate or an empty range must not consume a choice";
  EXPECT_EQ(plan.fired(FaultSite::kRequestLoss), 0);
}

TEST(FaultPlan, AFiringSiteIsCountedAndDrawsItsDurationInRange) {
  FaultRates rates;
  rates.ack_loss = 0.5;
  rates.duplicate = 0.5;
  rates.max_copies = 3;
  rates.pause_min = 10;
  rates.pause_max = 20;
  // ack loss: fires (high draw), then does not (0); duplicates: yes, no, yes; a pause of 10 + 7.
  Fixture f({999'999, 0, 999'999, 0, 999'999, 7});
  FaultPlan plan(rates, f.scheduler);
  EXPECT_TRUE(plan.fires(FaultSite::kAckLoss));
  EXPECT_FALSE(plan.fires(FaultSite::kAckLoss));
  EXPECT_EQ(plan.copies(), 2);
  EXPECT_EQ(plan.duration(FaultSite::kPause), 17);
  EXPECT_EQ(plan.fired(FaultSite::kAckLoss), 1);
  EXPECT_EQ(plan.fired(FaultSite::kDuplicate), 2);
  EXPECT_EQ(plan.fired(FaultSite::kPause), 0) << "a duration is not a fault of its own";
}

TEST(FaultPlan, TracesAFaultOnlyWhenTheTraceIsKept) {
  Fixture f({});
  FaultPlan plan(FaultRates{}, f.scheduler);
  int built = 0;
  plan.trace(FaultSite::kCrash, [&] { ++built; return std::string("the process crashes"); }, 3);
  ASSERT_EQ(f.trace.events().size(), 1u);
  EXPECT_EQ(f.trace.events()[0].task, 3);
  EXPECT_EQ(f.trace.events()[0].kind, sim::TraceKind::kFault);
  f.trace.set_recording(false);
  plan.trace(FaultSite::kCrash, [&] { ++built; return std::string("again"); });
  EXPECT_EQ(built, 1) << "without a trace the text is never built";
  EXPECT_EQ(site_name(FaultSite::kQueueRedelivery), "queue_redelivery");
}

}  // namespace
}  // namespace twice::fault
