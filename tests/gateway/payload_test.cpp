// The cached payload is the fresh one: over many notifies that differ in one
// field at a time (so a cache that compared too few fields would answer with
// a neighbour's body), asked in an order that both hits and evicts.
#include "gateway/payload.h"

#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace twice::gateway {
namespace {

Notify base_notify() {
  Notify n;
  n.event_id = "evt-O-1";
  n.out_trade_no = "O-1";
  n.transaction_id = "4200000001";
  n.amount = 12000;
  n.currency = "CNY";
  n.event_type = "TRANSACTION.SUCCESS";
  return n;
}

// The base notify and its neighbours, each one field away from it.
std::vector<Notify> neighbours() {
  std::vector<Notify> out;
  const Notify b = base_notify();
  out.push_back(b);
  auto with = [&](auto change) {
    Notify n = b;
    change(n);
    out.push_back(n);
  };
  with([](Notify& n) { n.event_id = "evt-O-1-2"; });
  with([](Notify& n) { n.out_trade_no = "O-2"; });
  with([](Notify& n) { n.out_trade_no = "O-\"quoted\"\n"; });
  with([](Notify& n) { n.transaction_id = "4300000001"; });
  with([](Notify& n) { n.amount = 120; });
  with([](Notify& n) { n.currency = "USD"; });
  with([](Notify& n) { n.event_type = "TRANSACTION.CLOSED"; });
  with([](Notify& n) { n.event_type = "REFUND.SUCCESS"; });
  with([](Notify& n) { n.refund_amount = 12000; });
  with([](Notify& n) {
    n.event_type = "TRADE_CLOSED";
    n.refund_amount = 12000;
  });
  // Fields the body does not hold do not change it, cached or not.
  with([](Notify& n) { n.signature = "t=1,v1=00"; });
  with([](Notify& n) { n.gateway = "alipay"; });
  return out;
}

TEST(Payload, CachedEqualsFreshForNeighboursAskedInAnyOrder) {
  std::vector<Notify> notifies = neighbours();
  // More distinct bodies than the cache holds (4,096), so that it is emptied and refilled.
  for (int i = 0; i < 4200; ++i) {
    Notify n = base_notify();
    n.out_trade_no = "O-" + std::to_string(100 + i);
    n.event_id = "evt-" + n.out_trade_no;
    n.amount = 1000 + i;
    notifies.push_back(n);
  }
  std::mt19937_64 rng(20261201);
  std::uniform_int_distribution<std::size_t> pick(0, notifies.size() - 1);
  for (int i = 0; i < 20000; ++i) {
    const Notify& n = notifies[pick(rng)];
    ASSERT_EQ(cached_payload(n), payload_of(n)) << "notify " << n.event_id << " " << n.out_trade_no;
  }
}

TEST(Payload, TheBodyIsTheGatewaysJson) {
  Notify n = base_notify();
  EXPECT_EQ(cached_payload(n),
            R"({"amount":{"currency":"CNY","total":12000},"event_type":"TRANSACTION.SUCCESS","id":"evt-O-1",)"
            R"("out_trade_no":"O-1","trade_state":"SUCCESS","transaction_id":"4200000001"})");
  n.event_type = "REFUND.SUCCESS";
  n.refund_amount = 12000;
  EXPECT_EQ(cached_payload(n),
            R"({"amount":{"currency":"CNY","refund":12000,"total":12000},"event_type":"REFUND.SUCCESS",)"
            R"("id":"evt-O-1","out_trade_no":"O-1","trade_state":"REFUND","transaction_id":"4200000001"})");
}

}  // namespace
}  // namespace twice::gateway
