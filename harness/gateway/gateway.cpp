#include "gateway/gateway.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace twice::gateway {

Gateway::Gateway(const Scenario& scenario, const RetryProfile& profile, sim::Scheduler& scheduler, Deliver deliver)
    : scenario_(scenario), profile_(profile), scheduler_(scheduler), deliver_(std::move(deliver)) {
  for (std::size_t i = 0; i < scenario.orders.size(); ++i) {
    PaymentRecord p;
    p.order = scenario.orders[i];
    p.transaction_id = fmt::format("4200{:06}", i + 1);
    payments_.push_back(std::move(p));
  }
}

Notify Gateway::notify_for(std::size_t index) const {
  const PaymentRecord& p = payments_[index];
  Notify n;
  n.event_id = fmt::format("evt-{}", p.order.order_no);
  n.out_trade_no = p.order.order_no;
  n.transaction_id = p.transaction_id;
  n.amount = p.order.amount;
  n.currency = p.order.currency;
  n.event_type = profile_.paid_event_type;
  // nlohmann escapes whatever an order number holds; the payload is what a
  // real gateway would post, and it is untrusted downstream.
  n.raw_payload = nlohmann::json{{"id", n.event_id},
                                 {"event_type", n.event_type},
                                 {"out_trade_no", n.out_trade_no},
                                 {"transaction_id", n.transaction_id},
                                 {"amount", {{"total", n.amount}, {"currency", n.currency}}},
                                 {"trade_state", "SUCCESS"}}
                      .dump();
  return n;
}

void Gateway::start() {
  for (std::size_t i = 0; i < payments_.size(); ++i) {
    scheduler_.at(payments_[i].order.paid_at, [this, i] {
      payments_[i].settled = true;
      scheduler_.record(sim::EventKind::kGateway,
                        fmt::format("{} pays {} {} for order {}", payments_[i].order.user, payments_[i].order.amount,
                                    payments_[i].order.currency, payments_[i].order.order_no));
      send(i, 1);
    });
  }
}

void Gateway::send(std::size_t payment, int number) {
  PaymentRecord& p = payments_[payment];
  ++p.attempts;
  auto attempt = std::make_shared<Attempt>(Attempt{payment, number});
  sim::Choices& choices = scheduler_.choices();

  int copies = 1;
  for (int c = 0; c < scenario_.max_copies; ++c)
    if (choices.chance(scenario_.duplicate)) ++copies;

  const Notify notify = notify_for(payment);
  for (int copy = 0; copy < copies; ++copy) {
    Micros delay = copy == 0 ? 0 : choices.between(scenario_.duplicate_delay_min, scenario_.duplicate_delay_max);
    const std::string name = copy == 0 ? fmt::format("notify {} #{}", p.order.order_no, number)
                                       : fmt::format("notify {} #{} (network copy)", p.order.order_no, number);
    const int task = deliver_(notify, name, scheduler_.now() + delay,
                              [this, attempt, copy](std::optional<Reply> reply) { on_reply(attempt, copy, std::move(reply)); });
    ++p.deliveries;
    if (copy == 0) {
      scheduler_.record(sim::EventKind::kGateway,
                        fmt::format("sends notify {} attempt {} as {}", p.order.order_no, number, sim::task_label(task)));
    } else {
      scheduler_.record(sim::EventKind::kFault, fmt::format("network duplicates notify {} attempt {}: {} arrives after {}",
                                                            p.order.order_no, number, sim::task_label(task),
                                                            format_duration(delay)));
    }
  }

  scheduler_.at(scheduler_.now() + profile_.timeout, [this, attempt] {
    if (attempt->resolved) return;
    fail_attempt(*attempt, fmt::format("no answer within {}", format_duration(profile_.timeout)));
  });
}

void Gateway::on_reply(const std::shared_ptr<Attempt>& attempt, int copy, std::optional<Reply> reply) {
  PaymentRecord& p = payments_[attempt->payment];
  const std::string what = fmt::format("notify {} attempt {}", p.order.order_no, attempt->number);
  if (!reply) return;  // the task died: no answer went out
  // Only the reply to the gateway's own request can reach it: the network's
  // copies were answered into the void.
  if (copy != 0) return;
  if (scheduler_.choices().chance(scenario_.ack_loss)) {
    scheduler_.record(sim::EventKind::kFault, fmt::format("the reply to {} is lost on the way back", what));
    return;  // the gateway times out
  }
  if (attempt->resolved) {
    scheduler_.record(sim::EventKind::kGateway, fmt::format("late reply to {} ignored (already timed out)", what));
    return;
  }
  attempt->resolved = true;
  if (profile_.is_ack(*reply)) {
    if (!p.acked) p.acked_at = scheduler_.now();
    p.acked = true;
    scheduler_.record(sim::EventKind::kGateway, fmt::format("{} acked (HTTP {})", what, reply->http_status));
    return;
  }
  fail_attempt(*attempt, fmt::format("not acked (HTTP {})", reply->http_status));
}

void Gateway::fail_attempt(Attempt& attempt, const std::string& why) {
  attempt.resolved = true;
  PaymentRecord& p = payments_[attempt.payment];
  const int max_attempts = scenario_.max_attempts > 0 ? scenario_.max_attempts
                                                      : static_cast<int>(profile_.retry_after.size()) + 1;
  const std::size_t retry_index = static_cast<std::size_t>(attempt.number) - 1;
  if (attempt.number >= max_attempts || retry_index >= profile_.retry_after.size()) {
    scheduler_.record(sim::EventKind::kGateway,
                      fmt::format("notify {} attempt {} {}; retries exhausted", p.order.order_no, attempt.number, why));
    return;
  }
  const Micros delay = profile_.retry_after[retry_index];
  scheduler_.record(sim::EventKind::kGateway, fmt::format("notify {} attempt {} {}; retries in {}", p.order.order_no,
                                                          attempt.number, why, format_duration(delay)));
  const std::size_t payment = attempt.payment;
  const int next = attempt.number + 1;
  scheduler_.at(scheduler_.now() + delay, [this, payment, next] { send(payment, next); });
}

}  // namespace twice::gateway
