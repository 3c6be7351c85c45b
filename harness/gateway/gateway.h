// Gateway: plays the payment gateway of a Scenario on the Scheduler. For each
// paid order it settles the payment at paid_at and notifies the merchant (and
// later its refund, or the close of a trade never paid, where the scenario
// says so),
// waits for a reply up to the profile's timeout, and retries on the profile's
// schedule until acknowledged or out of attempts. The network between them may
// delay, duplicate or lose requests and lose replies; an attacker may send
// invalid notifies; Adyen's profile queues notifications head-of-line.
//
// The gateway keeps its own ledger of what it settled and what was acked: the
// checker's ground truth, never what the handler says about itself. It also
// answers the merchant's active queries and verifies signatures (GatewayPort).
// It only speaks the protocol (settle, notify, retry on its schedule, take an
// ack by the profile's rules): what the network does to its requests is the
// Transport's business, and replies come back through receive().
// Runs on the scheduler thread, or on the task holding the baton.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "env/gateway_port.h"
#include "fault/fault_plan.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario.h"
#include "gateway/transport.h"
#include "gateway/wire_format.h"
#include "sim/scheduler.h"
#include "twice/notify.h"

namespace twice::gateway {

struct PaymentRecord {
  OrderSpec order;
  std::string transaction_id;
  bool settled = false;
  Micros settled_at = -1;  // when it settled; -1: never
  int attempts = 0;    // requests the gateway sent, over all its notifications
  int deliveries = 0;  // requests that reached the handler (copies included)
  bool acked = false;  // the "paid" notification was acknowledged
  Micros acked_at = 0;
  bool second_payment = false;  // the order paid again over another channel (OrderSpec::paid_twice)
  bool refunded = false;  // the gateway gave the payment back to the payer (OrderSpec::refund_after)
  Micros refund_acked_at = -1;  // when the merchant first acknowledged the refund's notification; -1: never
  bool closed = false;    // the gateway closed the unpaid trade (OrderSpec::closed_at)
};

class Gateway final : public env::GatewayPort {
 public:
  // `profile`: the one the scenario plays (played_profile(), gateway/scenario_profile.h),
  // which must outlive the gateway.
  Gateway(const Scenario& scenario, const RetryProfile& profile, sim::Scheduler& scheduler, Transport& transport,
          fault::FaultPlan& faults);
  // Schedules every payment and attack. Call once, before Scheduler::run().
  void start();
  // The merchant's reply to request `request` reached the gateway. Returns
  // the payment (an index into payments()) when the gateway takes it as an
  // ack of that payment's "paid" notification.
  std::optional<std::size_t> receive(int request, const Reply& reply);
  // "notify O-1 TRANSACTION.SUCCESS attempt 2": request `request` in the trace.
  std::string describe(int request) const;

  const std::vector<PaymentRecord>& payments() const { return payments_; }
  const RetryProfile& profile() const { return profile_; }
  // True when every notification the gateway created is acked or given up.
  bool idle() const;

  Status verify(const Notify& notify) const override;
  std::optional<Notify> query_payment(std::string_view out_trade_no) const override;
  // The notify as this profile really sends it (gateway/wire_format.h), with
  // the simulated keys. Its request time is the signature's t= (the captured
  // request's own for a replayed notify); the payment's and the event's
  // times are the gateway's records, the same on every resend (WireTimes); a
  // signature the gateway's secret does not give (the
  // forged attack) makes it signed with the forger's key; its nonces come
  // from the notify itself, so a run's requests are a function of its seed.
  // Built on first ask and kept: a duplicate delivery is the same request.
  StatusOr<WireRequest> wire(const Notify& notify) const override;
  const WireSecrets& wire_secrets() const override;

 private:
  struct Notification {
    std::size_t payment;
    std::string event_id;
    std::string event_type;
    EventKind kind;
    bool second_signal = false;  // a second success event for one payment (TRADE_FINISHED)
    bool finished = false;
    Micros created_at = 0;       // when the gateway made it: its event time on the wire, on every resend
    Micros first_sent_at = -1;   // its first request; -1: not sent yet (what a replay attack captures)
  };
  struct Attempt {
    std::size_t notification;
    int number;  // 1-based
    bool resolved = false;
  };

  Notify build(std::size_t payment, const std::string& event_id, const std::string& event_type, EventKind kind) const;
  void resign(Notify& n, std::string_view key, Micros at) const;
  void notify_later(std::size_t payment, const std::string& event_id, const std::string& event_type, EventKind kind,
                    Micros at, bool second_signal = false);
  void settle_payment(std::size_t payment);
  void settle_refund(std::size_t payment);
  void close_trade(std::size_t payment);
  void enqueue(std::size_t notification);
  void pump();
  void send(std::size_t notification, int number);
  // `why` says why the attempt failed ("no answer within 5s"); called only
  // when the trace is kept, so an untraced run formats nothing.
  void fail_attempt(int request, const std::function<std::string()>& why);
  void finish(std::size_t notification);
  void schedule_attacks();
  // The replayed attack: the request of a paid notification the gateway
  // really sent (the target payment's, else the first sent), sent again
  // `offset` into the attack window; none sent yet: it waits for the first.
  void replay(std::size_t target, Micros offset);
  std::optional<std::size_t> captured_notification(std::size_t target) const;
  // Whether the scenario holds an order of this number (the unknown-order
  // attack must name none).
  bool is_order(const std::string& order_no) const;
  // The times `n`'s wire form carries, `sent` being its signature's.
  WireTimes wire_times(const Notify& n, std::int64_t sent) const;

  const Scenario& scenario_;
  const RetryProfile& profile_;
  sim::Scheduler& scheduler_;
  Transport& transport_;
  fault::FaultPlan& faults_;
  std::vector<PaymentRecord> payments_;
  std::vector<Notification> notifications_;
  std::vector<Attempt> attempts_;  // every request sent, by id
  std::deque<std::size_t> queue_;  // head-of-line profiles: notifications waiting their turn
  bool head_busy_ = false;
  std::string secret_;
  mutable std::map<std::string, WireRequest> wire_cache_;  // by signature and payload; filled by wire()
  std::vector<Micros> waiting_replays_;  // replays with nothing to capture yet: their offsets
};

}  // namespace twice::gateway
