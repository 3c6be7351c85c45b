// Gateway: plays the payment gateway of a Scenario on the Scheduler. For each
// order it settles the payment at paid_at, notifies the merchant, waits for a
// reply up to the profile's timeout, and retries on the profile's schedule
// until acknowledged or out of attempts. The network between them may send a
// request twice (duplicate) or lose the reply (ack_loss).
//
// The gateway keeps its own ledger of what it settled and what was acked:
// the checker's ground truth, never what the handler says about itself.
// Runs on the scheduler thread only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gateway/retry_profile.h"
#include "gateway/scenario.h"
#include "sim/scheduler.h"
#include "twice/notify.h"

namespace twice::gateway {

struct PaymentRecord {
  OrderSpec order;
  std::string transaction_id;
  bool settled = false;
  int attempts = 0;    // requests the gateway sent
  int deliveries = 0;  // requests that reached the handler (copies included)
  bool acked = false;
  Micros acked_at = 0;
};

class Gateway {
 public:
  // Starts a task that calls the handler with `notify`; `on_reply` gets the
  // reply, or nullopt when the task died without one. Returns the task id.
  using Deliver = std::function<int(const Notify& notify, std::string task_name, Micros at,
                                    std::function<void(std::optional<Reply>)> on_reply)>;

  Gateway(const Scenario& scenario, const RetryProfile& profile, sim::Scheduler& scheduler, Deliver deliver);
  // Schedules every payment. Call once, before Scheduler::run().
  void start();
  const std::vector<PaymentRecord>& payments() const { return payments_; }
  const RetryProfile& profile() const { return profile_; }

  // The notify for payment `index`, as the gateway would sign and send it.
  Notify notify_for(std::size_t index) const;

 private:
  struct Attempt {
    std::size_t payment;
    int number;  // 1-based
    bool resolved = false;
  };
  void send(std::size_t payment, int number);
  void on_reply(const std::shared_ptr<Attempt>& attempt, int copy, std::optional<Reply> reply);
  void fail_attempt(Attempt& attempt, const std::string& why);

  const Scenario& scenario_;
  const RetryProfile& profile_;
  sim::Scheduler& scheduler_;
  Deliver deliver_;
  std::vector<PaymentRecord> payments_;
};

}  // namespace twice::gateway
