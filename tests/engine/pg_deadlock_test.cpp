// Deadlocks on PostgreSQL: two transactions that lock the same two rows in
// opposite orders. Every task parks; the server's deadlock detector must
// break the cycle, and which transaction it picks must not change from one
// run of the seed to the next.
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "engine_environment.h"
#include "sim/trace.h"
#include "support.h"
#include "twice/handler.h"

namespace twice::testing {
namespace {

using engine::Isolation;

// Touches the two orders of the two-top-ups scenario, its own first: O-1's
// delivery locks O-1 then O-2, O-2's delivery O-2 then O-1. A deadlock
// victim's whole transaction is run again, once.
class OppositeOrder final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    Db& db = env.db();
    const std::string other = n.out_trade_no == "O-1" ? "O-2" : "O-1";
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto tx = db.begin();
      Status s = tx.status();
      for (const std::string& order : {n.out_trade_no, other})
        if (s.ok()) s = db.exec("UPDATE orders SET created_at = created_at + 1 WHERE order_no = ?", {order}).status;
      if (s.ok()) s = tx.commit();
      if (s.ok()) return Reply::ack(n);
      if (!s.is_deadlock()) return Reply::fail();
    }
    return Reply::fail();
  }
};

}  // namespace
}  // namespace twice::testing

TWICE_REGISTER_HANDLER(twice::testing::OppositeOrder, "test-opposite-order",
                       "test only: locks two orders in opposite orders (deadlocks)");

namespace twice::testing {

TEST(PgDeadlock, TheServerBreaksTheCycleAndTheSameSessionIsTheVictimEveryTime) {
  const gateway::Scenario s = two_topups_scenario();
  // T1 and T2 start and lock their own order; then each asks for the other's.
  const std::vector<int> script = {1, 1, 1, 2, 2, 2, 1, 2};
  std::string first_trace;
  for (int run = 0; run < 3; ++run) {
    run::RunSpec spec{&s, &handler("test-opposite-order"), {}, 0, std::nullopt};
    spec.strategy.kind = sim::StrategyKind::kScripted;
    spec.strategy.script = script;
    spec.engine = on_postgres(Isolation::kReadCommitted);
    const run::RunResult r = run::simulate(spec).value();
    const std::string trace = sim::format_trace(r.trace);
    int deadlocks = 0;
    for (const auto& e : r.trace.events()) deadlocks += e.result.starts_with("DEADLOCK: ");
    EXPECT_EQ(deadlocks, 1) << trace;
    // Both deliveries end acknowledged: the victim's retry goes through.
    int acks = 0;
    for (const auto& e : r.trace.events()) acks += e.text.starts_with("replies HTTP 200");
    EXPECT_EQ(acks, 2) << trace;
    if (run == 0 && std::getenv("SHOW_TRACE")) std::puts(trace.c_str());
    if (run == 0) first_trace = trace;
    else EXPECT_EQ(trace, first_trace);
  }
}

}  // namespace twice::testing
