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
// Runs on the scheduler thread, or on the task holding the baton.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/gateway_port.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario.h"
#include "sim/scheduler.h"
#include "twice/notify.h"

namespace twice::gateway {

struct PaymentRecord {
  OrderSpec order;
  std::string transaction_id;
  bool settled = false;
  int attempts = 0;    // requests the gateway sent, over all its notifications
  int deliveries = 0;  // requests that reached the handler (copies included)
  bool acked = false;  // the "paid" notification was acknowledged
  Micros acked_at = 0;
  bool refunded = false;  // the gateway gave the payment back to the payer (OrderSpec::refund_after)
  bool closed = false;    // the gateway closed the unpaid trade (OrderSpec::closed_at)
};

// Why a delivery reaches the handler: the checker treats invalid ones apart.
enum class DeliveryKind { kGateway, kNetworkCopy, kQueueRedelivery, kInvalid };

class Gateway final : public env::GatewayPort {
 public:
  struct Delivery {
    Notify notify;
    std::string task_name;
    Micros at;
    DeliveryKind kind;
    std::string invalid_reason;  // for kInvalid: what is wrong with it
    std::function<void(std::optional<Reply>)> on_reply;  // nullopt: the task died without an answer
  };
  // Starts a task that calls the handler. Returns the task id.
  using Deliver = std::function<int(Delivery)>;

  Gateway(const Scenario& scenario, const RetryProfile& profile, sim::Scheduler& scheduler, Deliver deliver);
  // Schedules every payment and attack. Call once, before Scheduler::run().
  void start();
  // Called when the gateway takes a reply as an ack for `payment` (index into payments()).
  void on_ack(std::function<void(std::size_t payment)> fn) { on_ack_ = std::move(fn); }

  const std::vector<PaymentRecord>& payments() const { return payments_; }
  const RetryProfile& profile() const { return profile_; }
  // True when every notification the gateway created is acked or given up.
  bool idle() const;

  Status verify(const Notify& notify) const override;
  std::optional<Notify> query_payment(std::string_view out_trade_no) const override;

 private:
  struct Notification {
    std::size_t payment;
    std::string event_id;
    std::string event_type;
    EventKind kind;
    bool finished = false;
  };
  struct Attempt {
    std::size_t notification;
    int number;  // 1-based
    bool resolved = false;
  };

  Notify build(std::size_t payment, const std::string& event_id, const std::string& event_type, EventKind kind) const;
  void resign(Notify& n, std::string_view key, Micros at) const;
  void notify_later(std::size_t payment, const std::string& event_id, const std::string& event_type, EventKind kind,
                    Micros at);
  void settle_payment(std::size_t payment);
  void settle_refund(std::size_t payment);
  void close_trade(std::size_t payment);
  void enqueue(std::size_t notification);
  void pump();
  void send(std::size_t notification, int number);
  void on_reply(const std::shared_ptr<Attempt>& attempt, std::optional<Reply> reply);
  void fail_attempt(Attempt& attempt, const std::string& why);
  void finish(std::size_t notification);
  void schedule_attacks();

  const Scenario& scenario_;
  const RetryProfile& profile_;
  sim::Scheduler& scheduler_;
  Deliver deliver_;
  std::function<void(std::size_t)> on_ack_;
  std::vector<PaymentRecord> payments_;
  std::vector<Notification> notifications_;
  std::deque<std::size_t> queue_;  // head-of-line profiles: notifications waiting their turn
  bool head_busy_ = false;
  std::string secret_;
};

}  // namespace twice::gateway
