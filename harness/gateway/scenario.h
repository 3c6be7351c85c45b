// Scenario: what the gateway and the network do in a run, as read from a
// bundled or user-written TOML file (format: docs/scenarios.md). A Scenario is
// plain data; the Gateway plays it, drawing every fault from the run's Choices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twice/status_or.h"
#include "twice/time.h"

namespace twice::gateway {

struct OrderSpec {
  std::string order_no;
  std::string user;
  std::int64_t amount = 0;  // minor units
  std::string currency = "CNY";
  Micros paid_at = 0;       // when the user pays: the gateway's first notify follows
  bool paid = true;         // false: the user never pays (an attack target, or an order to close)
  bool paid_twice = false;  // the user pays again over another channel a second later
  // > 0: the merchant refunds the payment; the refund settles at the gateway
  // this long after paid_at, and the gateway sends its refund notification.
  Micros refund_after = 0;
  // >= 0 (only for an order never paid): the gateway closes the trade at this
  // time and notifies (Alipay TRADE_CLOSED, Stripe payment_intent.canceled).
  Micros closed_at = -1;
};

// Invalid deliveries an attacker (or a confused upstream) sends, each at a
// time drawn in [0, window]. None may change what the checker's oracle
// queries read, unless the gateway settled it and the task asked the gateway
// (`accepted_invalid`).
struct Attacks {
  int forged_signature = 0;  // a "paid" notify for an order, signed with the wrong key
  int wrong_amount = 0;      // validly signed, but the gateway settled 1% of the order's amount (100x an amount of 1)
  int wrong_currency = 0;    // validly signed, in another currency
  int unknown_order = 0;     // validly signed, for an order the merchant never created
  // A paid notification's request as the gateway really sent it, sent again
  // (its event id, body and signature): stale past the tolerance of a
  // gateway that signs a time (Stripe, WeChat v3), a duplicate elsewhere.
  int replayed = 0;
  Micros window = 10 * kSecond;
  int total() const { return forged_signature + wrong_amount + wrong_currency + unknown_order + replayed; }
};

// An external service the merchant's code calls (Env::call): a warehouse, a
// mail service, another team's inventory API. Its faults are drawn per call at
// the FaultPlan's service sites. Every scenario has the built-in three
// (builtin_services()); a [[services]] entry with one of their names changes
// that one, any other name adds a service of the scenario's own.
struct ServiceSpec {
  std::string name;                  // "warehouse"
  std::vector<std::string> effects;  // what it applies, per order: "ship"
  // Stripe-style: a repeated key gets the first answer and applies nothing,
  // for `retention` after the first call. false: every request is applied.
  bool idempotency_keys = true;
  Micros retention = 24 * kHour;
  double slow = 0.0;  // probability that a call takes a while (in slow_min..slow_max) before the service acts
  Micros slow_min = 1 * kSecond;
  Micros slow_max = 10 * kSecond;
  double unavailable = 0.0;  // probability that a call fails before the service applied anything
  double timeout = 0.0;      // probability that the service applies the call, and the caller sees a timeout
  double duplicate = 0.0;    // probability that the request reaches the service twice (each copy applied)
  // A service with a "decrement" effect keeps a stock counter: a decrement
  // refuses at zero, and the queries "read" and "write" get and set the
  // counter (a write that lowers it applies that many decrements).
  std::int64_t stock = 1000;
  int line = 0;  // where the scenario declared (or changed) it; 0: built in
};

// [gateway]: the profile's figures a scenario sets in place of the profile's
// own (docs/scenarios.md): the ones a gateway does not publish (Alipay's
// timeout, Stripe's intervals), or a published one the user's gateway account
// does not keep, or an incident's (a 3 s timeout). Unset: the profile's.
// gateway/scenario_profile.h gives the profile a run of the scenario plays.
struct GatewaySettings {
  std::optional<Micros> timeout;                       // no answer by then: the attempt failed
  std::optional<std::vector<Micros>> retry_intervals;  // the wait before retry i (after attempt i+1 failed)
};

// warehouse (ship), mail (mail), inventory (decrement): no faults, keys honoured.
const std::vector<ServiceSpec>& builtin_services();

struct Scenario {
  std::string name;         // the file's stem: "concurrent-duplicates"
  std::string description;  // one line, for `twice list`
  std::string source;       // the file it came from, for messages
  std::string digest;       // its values' digest (scenario_digest.h); empty for a Scenario built in code
  std::string profile = "wechat-v3";
  GatewaySettings gateway;  // [gateway]
  std::vector<OrderSpec> orders;

  // Network: each scheduling point (a statement, a lock call) takes a latency in this range.
  Micros latency_min = 1 * kMillisecond;
  Micros latency_max = 20 * kMillisecond;
  // Faults, each drawn per delivery attempt from the run's Choices.
  double duplicate = 0.0;   // probability that the network sends an attempt again
  int max_copies = 1;       // at most this many extra copies per attempt
  Micros duplicate_delay_min = 0;
  Micros duplicate_delay_max = 1 * kSecond;
  double ack_loss = 0.0;    // probability that the handler's reply never reaches the gateway
  int max_attempts = 0;     // 0: the profile's whole schedule
  Micros delay_min = 0;     // each delivery is delayed by a time in this range: reorders notifications
  Micros delay_max = 0;
  double request_loss = 0.0;  // probability that a request never reaches the handler
  double pause = 0.0;         // probability that a task stalls before an operation (GC pause, slow I/O)
  Micros pause_min = 1 * kSecond;
  Micros pause_max = 30 * kSecond;
  double crash = 0.0;         // probability that the process dies before an operation
  Micros restart_min = 10 * kSecond;  // downtime after a crash
  Micros restart_max = 60 * kSecond;
  double mq_redelivery = 0.0; // probability that the queue behind the endpoint delivers a message again
  Micros mq_delay_min = 0;
  Micros mq_delay_max = 30 * kSecond;
  double second_signal = 0.0; // probability of a second success event for a payment (TRADE_FINISHED)
  Micros second_signal_delay_min = 1 * kSecond;
  Micros second_signal_delay_max = 10 * kMinute;
  Attacks attacks;

  // The merchant's background jobs.
  bool reconciler = false;  // queries orders still waiting after 30 min, every 10 min
  // The reconciler was added by `twice run --reconciler`, not by the file: a
  // replay of this scenario needs `--reconciler` too (its replay commands say it).
  bool reconciler_from_option = false;
  Micros close_after = 0;   // > 0: an order-close job closes orders waiting this long, every 10 min

  bool payload_required = false;  // every credited payment's raw payload must be stored

  // The external services of the run: the built-in three, as the scenario
  // changed them, then its own. Empty (a Scenario built in code): the built-ins.
  std::vector<ServiceSpec> services;
  // Effects every paid, unrefunded order must cause exactly once ([checks]
  // effects): "ship", "mail". Each is declared by one of `services`.
  std::vector<std::string> required_effects;
};

// The services a run of `s` has: s.services, or the built-ins when it names none.
const std::vector<ServiceSpec>& services_of(const Scenario& s);

// Limits of a scenario file (docs/scenarios.md), refused at load with file:line.
inline constexpr Micros kMaxDuration = 30 * 24 * kHour;  // any one duration: 30 days
inline constexpr std::size_t kMaxOrders = 200;           // [[orders]] entries
inline constexpr int kMaxAttacksOfAKind = 100;           // each count in [attacks]
inline constexpr std::size_t kMaxRetryIntervals = 99;    // [gateway] retry_intervals: 100 attempts, max_attempts' most

// Loading reports errors as an error Status whose message is one line,
// "scenarios/x.toml:12: ... ; allowed: ...": never by throwing.
// Reads and validates one scenario file.
StatusOr<Scenario> load_scenario(const std::string& path);
// The paths of every *.toml in `dir` except expected.toml, sorted by name.
StatusOr<std::vector<std::string>> scenario_files(const std::string& dir);
// Reads every *.toml in `dir` except expected.toml, sorted by name.
StatusOr<std::vector<Scenario>> load_scenario_dir(const std::string& dir);

}  // namespace twice::gateway
