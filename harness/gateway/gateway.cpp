#include "gateway/gateway.h"

#include <algorithm>

#include <fmt/format.h>
#include "gateway/payload.h"
#include "gateway/signature.h"
#include "gateway/simulated_keys.h"
#include "gateway/wire_format.h"

namespace twice::gateway {

namespace {

// `prefix` and `n` in six digits at least: "4200000001", as fmt's
// "4200{:06}" writes it, without its formatting engine (built every run).
std::string transaction_id(std::string_view prefix, std::size_t n) {
  const std::string digits = std::to_string(n);
  std::string out(prefix);
  if (digits.size() < 6) out.append(6 - digits.size(), '0');
  return out + digits;
}

}  // namespace

Gateway::Gateway(const Scenario& scenario, const RetryProfile& profile, sim::Scheduler& scheduler, Transport& transport,
                 fault::FaultPlan& faults)
    : scenario_(scenario),
      profile_(profile),
      scheduler_(scheduler),
      transport_(transport),
      faults_(faults),
      secret_("whsec_twice_" + profile_.name) {
  for (std::size_t i = 0; i < scenario.orders.size(); ++i) {
    PaymentRecord p;
    p.order = scenario.orders[i];
    p.transaction_id = transaction_id("4200", i + 1);
    payments_.push_back(p);
    if (p.order.paid_twice) {
      // The same order paid again over another channel, a second later.
      p.transaction_id = transaction_id("4300", i + 1);
      p.second_payment = true;
      p.order.paid_at += kSecond;
      p.order.refund_after = 0;  // a refund is of the first payment
      payments_.push_back(std::move(p));
    }
  }
}

void Gateway::resign(Notify& n, std::string_view key, Micros at) const {
  n.signature = sign(key, kEpochSeconds + at / kSecond, n.raw_payload);
}

Notify Gateway::build(std::size_t payment, const std::string& event_id, const std::string& event_type,
                      EventKind kind) const {
  const PaymentRecord& p = payments_[payment];
  Notify n;
  n.event_id = event_id;
  n.out_trade_no = p.order.order_no;
  n.transaction_id = p.transaction_id;
  n.amount = p.order.amount;
  n.currency = p.order.currency;
  n.event_type = event_type;
  if (kind == EventKind::kRefunded) n.refund_amount = p.order.amount;
  n.gateway = profile_.name;
  n.raw_payload = cached_payload(n);
  resign(n, secret_, scheduler_.now());
  return n;
}

bool Gateway::idle() const {
  for (const auto& n : notifications_)
    if (!n.finished) return false;
  return true;
}

Status Gateway::verify(const Notify& notify) const {
  return gateway::verify(secret_, notify.signature, notify.raw_payload, scheduler_.now(), profile_.signature_tolerance);
}

std::optional<Notify> Gateway::query_payment(std::string_view out_trade_no) const {
  for (std::size_t i = 0; i < payments_.size(); ++i) {
    const PaymentRecord& p = payments_[i];
    if (p.order.order_no != out_trade_no || !p.settled) continue;
    // The payment as the gateway holds it now: a refunded one is no longer
    // paid (WeChat trade_state REFUND, Alipay TRADE_CLOSED with a refund,
    // black-box mode's query server alike). Answering "paid" here made every
    // correct handler credit a payment already given back (lost_refund).
    if (p.refunded)
      return build(i, fmt::format("query-{}-refund", out_trade_no), profile_.refunded_event_type,
                   EventKind::kRefunded);
    return build(i, fmt::format("query-{}", out_trade_no), profile_.paid_event_type, EventKind::kPaid);
  }
  return std::nullopt;
}

namespace {

// The seconds of a "t=<seconds>,v1=<hex>" signature; -1 when malformed.
std::int64_t signed_at(std::string_view signature) {
  if (!signature.starts_with("t=")) return -1;
  std::int64_t t = 0;
  std::size_t i = 2;
  for (; i < signature.size() && signature[i] >= '0' && signature[i] <= '9'; ++i) t = t * 10 + (signature[i] - '0');
  return i > 2 && i < signature.size() && signature[i] == ',' ? t : -1;
}

// 32 letters and digits drawn from the notify itself (its signature covers
// its time and body): the same request gets the same nonces on every replay,
// and no two requests of a run share them.
std::string nonce_of(const Notify& n) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const std::string digest = hmac_sha256("twice-wire-nonce", n.signature + "\n" + n.raw_payload);
  std::string out;
  for (const char c : digest) out += kChars[static_cast<unsigned char>(c) % (sizeof kChars - 1)];
  return out;
}

}  // namespace

StatusOr<WireRequest> Gateway::wire(const Notify& n) const {
  if (!has_wire_format(profile_.name))
    return Status::error(fmt::format("notify {}: profile {} has no wire format; those with one: {}", n.event_id,
                                     profile_.name, wire_formats()));
  const std::string key = n.signature + "\n" + n.raw_payload;
  if (const auto it = wire_cache_.find(key); it != wire_cache_.end()) return it->second;
  const std::int64_t t = signed_at(n.signature);
  if (t < 0) return Status::error(fmt::format("notify {}: its signature is not t=<seconds>,v1=<hex>", n.event_id));
  const bool forged = sign(secret_, t, n.raw_payload) != n.signature;
  StatusOr<WireRequest> r = encode(n, profile_.name, simulated_wire_keys(), wire_times(n, t), nonce_of(n), forged);
  if (r.ok()) wire_cache_.emplace(key, r.value());
  return r;
}

const WireSecrets& Gateway::wire_secrets() const { return simulated_wire_secrets(); }

WireTimes Gateway::wire_times(const Notify& n, std::int64_t sent) const {
  WireTimes times{sent, sent, sent};
  // A payment's time is when it settled, whichever request carries it
  // (every resend, a TRADE_FINISHED, an attacker's copy).
  for (const auto& p : payments_)
    if (p.transaction_id == n.transaction_id && p.settled_at >= 0) {
      times.paid = kEpochSeconds + p.settled_at / kSecond;
      break;
    }
  for (const auto& nt : notifications_)
    if (nt.event_id == n.event_id && payments_[nt.payment].transaction_id == n.transaction_id) {
      times.event = kEpochSeconds + nt.created_at / kSecond;
      break;
    }
  return times;
}

void Gateway::start() {
  for (std::size_t i = 0; i < payments_.size(); ++i) {
    const OrderSpec& o = payments_[i].order;
    if (o.paid) scheduler_.at(o.paid_at, [this, i] { settle_payment(i); });
    if (o.paid && o.refund_after > 0) scheduler_.at(o.paid_at + o.refund_after, [this, i] { settle_refund(i); });
    if (!o.paid && o.closed_at >= 0) scheduler_.at(o.closed_at, [this, i] { close_trade(i); });
  }
  schedule_attacks();
}

void Gateway::settle_payment(std::size_t i) {
  PaymentRecord& p = payments_[i];
  p.settled = true;
  p.settled_at = scheduler_.now();
  if (scheduler_.tracing())  // no text is built for a trace nobody keeps
    scheduler_.record(sim::TraceKind::kGateway, fmt::format("{} pays {} {} for order {} (transaction {})", p.order.user,
                                                            p.order.amount, p.order.currency, p.order.order_no,
                                                            p.transaction_id));
  const std::string event_id = "evt-" + p.order.order_no + (p.second_payment ? "-p2" : "");
  notify_later(i, event_id, profile_.paid_event_type, EventKind::kPaid, scheduler_.now());
  // A second success signal for the same payment (Alipay TRADE_FINISHED,
  // a second Stripe event): a notification of its own, with its own id.
  // Only where the gateway has one (the loader refuses the fault elsewhere).
  if (!profile_.second_paid_event_type.empty() && faults_.fires(fault::FaultSite::kSecondSignal)) {
    const Micros later = faults_.duration(fault::FaultSite::kSecondSignalDelay);
    faults_.trace(fault::FaultSite::kSecondSignal, [&] {
      return fmt::format("a second success event for {} ({}) follows in {}", p.order.order_no,
                         profile_.second_paid_event_type, format_duration(later));
    });
    notify_later(i, fmt::format("evt-{}-2", p.order.order_no), profile_.second_paid_event_type, EventKind::kPaid,
                 scheduler_.now() + later, /*second_signal=*/true);
  }
}

// The merchant asked for a refund (out of band); the gateway settles it and
// says so with a notification of its own, retried like any other.
void Gateway::settle_refund(std::size_t i) {
  PaymentRecord& p = payments_[i];
  p.refunded = true;
  if (scheduler_.tracing())  // no text is built for a trace nobody keeps
    scheduler_.record(sim::TraceKind::kGateway, fmt::format("refunds {} {} of order {} to {} (transaction {})",
                                                            p.order.amount, p.order.currency, p.order.order_no,
                                                            p.order.user, p.transaction_id));
  notify_later(i, fmt::format("evt-{}-refund", p.order.order_no), profile_.refunded_event_type, EventKind::kRefunded,
               scheduler_.now());
}

void Gateway::close_trade(std::size_t i) {
  PaymentRecord& p = payments_[i];
  p.closed = true;
  if (scheduler_.tracing())  // no text is built for a trace nobody keeps
    scheduler_.record(sim::TraceKind::kGateway, fmt::format("closes the unpaid trade of order {}", p.order.order_no));
  notify_later(i, fmt::format("evt-{}-close", p.order.order_no), profile_.closed_event_type, EventKind::kClosed,
               scheduler_.now());
}

void Gateway::notify_later(std::size_t payment, const std::string& event_id, const std::string& event_type,
                           EventKind kind, Micros at, bool second_signal) {
  scheduler_.at(at, [this, payment, event_id, event_type, kind, second_signal] {
    notifications_.push_back(Notification{payment, event_id, event_type, kind, second_signal, false, scheduler_.now()});
    enqueue(notifications_.size() - 1);
  });
}

void Gateway::enqueue(std::size_t notification) {
  if (!profile_.head_of_line) {
    send(notification, 1);
    return;
  }
  queue_.push_back(notification);
  if (head_busy_)
    scheduler_.record(sim::TraceKind::kGateway,
                      fmt::format("notify {} waits in the endpoint's queue behind {} other{}",
                                  payments_[notifications_[notification].payment].order.order_no, queue_.size() - 1,
                                  queue_.size() == 2 ? "" : "s"));
  pump();
}

void Gateway::pump() {
  if (head_busy_ || queue_.empty()) return;
  head_busy_ = true;
  send(queue_.front(), 1);
}

void Gateway::finish(std::size_t notification) {
  notifications_[notification].finished = true;
  if (!profile_.head_of_line || queue_.empty() || queue_.front() != notification) return;
  queue_.pop_front();
  head_busy_ = false;
  pump();
}

void Gateway::send(std::size_t notification, int number) {
  const Notification& nt = notifications_[notification];
  PaymentRecord& p = payments_[nt.payment];
  ++p.attempts;
  const int request = static_cast<int>(attempts_.size());
  attempts_.push_back(Attempt{notification, number});
  // The task's name is part of the result (the transcript's columns); what
  // the trace calls the request is built only for a trace that is kept.
  std::string task_name = "notify " + p.order.order_no + " #" + std::to_string(number);
  if (nt.second_signal || nt.kind != EventKind::kPaid) task_name += " (" + nt.event_type + ")";
  p.deliveries += transport_.send(Request{build(nt.payment, nt.event_id, nt.event_type, nt.kind), request,
                                          scheduler_.tracing() ? describe(request) : std::string(),
                                          std::move(task_name)});
  if (Notification& sent = notifications_[notification]; sent.first_sent_at < 0) {
    sent.first_sent_at = scheduler_.now();
    // Replays that found nothing to capture go now that there is something.
    if (sent.kind == EventKind::kPaid && !waiting_replays_.empty()) {
      const std::size_t payment = sent.payment;
      for (const Micros offset : waiting_replays_)
        scheduler_.at(scheduler_.now() + offset, [this, payment, offset] { replay(payment, offset); });
      waiting_replays_.clear();
    }
  }
  scheduler_.at(scheduler_.now() + profile_.timeout, [this, request] {
    if (attempts_[static_cast<std::size_t>(request)].resolved) return;
    fail_attempt(request, [this] { return fmt::format("no answer within {}", format_duration(profile_.timeout)); });
  });
}

std::string Gateway::describe(int request) const {
  const Attempt& a = attempts_[static_cast<std::size_t>(request)];
  const Notification& nt = notifications_[a.notification];
  return fmt::format("notify {} {} attempt {}", payments_[nt.payment].order.order_no, nt.event_type, a.number);
}

std::optional<std::size_t> Gateway::receive(int request, const Reply& reply) {
  Attempt& attempt = attempts_[static_cast<std::size_t>(request)];
  if (attempt.resolved) {
    if (scheduler_.tracing())  // no text is built for a trace nobody keeps
      scheduler_.record(sim::TraceKind::kGateway, fmt::format("late reply to {} ignored (already timed out)", describe(request)));
    return std::nullopt;
  }
  attempt.resolved = true;
  const std::size_t notification = attempt.notification;
  const Notification& nt = notifications_[notification];
  if (const char* why = profile_.refusal(reply)) {
    fail_attempt(request, [&reply, why] {
      return *why ? fmt::format("not acked (HTTP {}: {})", reply.http_status, why)
                  : fmt::format("not acked (HTTP {})", reply.http_status);
    });
    return std::nullopt;
  }
  if (scheduler_.tracing())  // no text is built for a trace nobody keeps
    scheduler_.record(sim::TraceKind::kGateway, fmt::format("{} acked (HTTP {})", describe(request), reply.http_status));
  std::optional<std::size_t> acked;
  if (nt.kind == EventKind::kPaid) {
    PaymentRecord& p = payments_[nt.payment];
    if (!p.acked) p.acked_at = scheduler_.now();
    p.acked = true;
    acked = nt.payment;
  } else if (nt.kind == EventKind::kRefunded) {
    PaymentRecord& p = payments_[nt.payment];
    if (p.refund_acked_at < 0) p.refund_acked_at = scheduler_.now();
  }
  finish(notification);
  return acked;
}

void Gateway::fail_attempt(int request, const std::function<std::string()>& why) {
  Attempt& a = attempts_[static_cast<std::size_t>(request)];
  a.resolved = true;
  const Attempt attempt = a;  // finish() below may send again, and grow attempts_
  const int max_attempts = scenario_.max_attempts > 0 ? scenario_.max_attempts
                                                      : static_cast<int>(profile_.retry_after.size()) + 1;
  const std::size_t retry_index = static_cast<std::size_t>(attempt.number) - 1;
  if (attempt.number >= max_attempts || retry_index >= profile_.retry_after.size()) {
    if (scheduler_.tracing())  // no text is built for a trace nobody keeps
      scheduler_.record(sim::TraceKind::kGateway, fmt::format("{} {}; retries exhausted", describe(request), why()));
    finish(attempt.notification);
    return;
  }
  const Micros delay = profile_.retry_after[retry_index];
  if (scheduler_.tracing())  // no text is built for a trace nobody keeps
    scheduler_.record(sim::TraceKind::kGateway, fmt::format("{} {}; retries in {}", describe(request), why(),
                                                                format_duration(delay)));
  const std::size_t notification = attempt.notification;
  const int next = attempt.number + 1;
  scheduler_.at(scheduler_.now() + delay, [this, notification, next] { send(notification, next); });
}

void Gateway::schedule_attacks() {
  const Attacks& a = scenario_.attacks;
  if (a.total() == 0) return;
  sim::Choices& c = scheduler_.choices();
  int serial = 0;
  auto launch = [&](const char* kind, int count, auto tamper) {
    for (int i = 0; i < count; ++i) {
      const std::size_t target = static_cast<std::size_t>(c.draw(payments_.size()));
      const Micros at = c.between(0, a.window);
      const int n = ++serial;
      scheduler_.at(at, [this, target, n, kind, tamper] {
        Notify notify = build(target, fmt::format("evt-attack-{}", n), profile_.paid_event_type, EventKind::kPaid);
        const std::string reason = tamper(notify);
        scheduler_.record(sim::TraceKind::kFault, fmt::format("an attacker sends a {} notify: {}", kind, reason));
        transport_.inject(notify, fmt::format("{} notify {}", kind, notify.out_trade_no), reason);
      });
    }
  };
  auto repayload = [](Notify& n) { n.raw_payload = payload_of(n); };
  launch("forged", a.forged_signature, [this](Notify& n) {
    resign(n, "not-the-gateways-key", scheduler_.now());
    return fmt::format("order {} marked paid, signed with a key that is not the gateway's", n.out_trade_no);
  });
  launch("wrong-amount", a.wrong_amount, [this, repayload](Notify& n) {
    // 1% of the amount, at least 1; on an amount of 1 that is the amount
    // itself, a valid notify: there the attacker asks 100 times the amount.
    const std::int64_t hundredth = std::max<std::int64_t>(1, n.amount / 100);
    n.amount = hundredth != n.amount ? hundredth : n.amount * 100;
    repayload(n);
    resign(n, secret_, scheduler_.now());
    return fmt::format("order {} paid {} instead of the order's amount", n.out_trade_no, n.amount);
  });
  launch("wrong-currency", a.wrong_currency, [this, repayload](Notify& n) {
    n.currency = n.currency == "USD" ? "JPY" : "USD";
    repayload(n);
    resign(n, secret_, scheduler_.now());
    return fmt::format("order {} paid in {}, not the order's currency", n.out_trade_no, n.currency);
  });
  launch("unknown-order", a.unknown_order, [this, repayload](Notify& n) {
    // O-UNKNOWN-N, unless the scenario holds an order of that number: then
    // O-UNKNOWN-N-2, -3, ... the first it does not hold.
    const std::string number = "O-UNKNOWN-" + n.event_id.substr(11);
    n.out_trade_no = number;
    for (int k = 2; is_order(n.out_trade_no); ++k) n.out_trade_no = fmt::format("{}-{}", number, k);
    repayload(n);
    resign(n, secret_, scheduler_.now());
    return fmt::format("order {} does not exist", n.out_trade_no);
  });
  // A replay is no notify of the attacker's making: the request of a paid
  // notification the gateway really sent, sent again. Drawn as the others are.
  for (int i = 0; i < a.replayed; ++i) {
    const std::size_t target = static_cast<std::size_t>(c.draw(payments_.size()));
    const Micros at = c.between(0, a.window);
    scheduler_.at(at, [this, target, at] { replay(target, at); });
  }
}

bool Gateway::is_order(const std::string& order_no) const {
  return std::any_of(scenario_.orders.begin(), scenario_.orders.end(),
                     [&](const OrderSpec& o) { return o.order_no == order_no; });
}

std::optional<std::size_t> Gateway::captured_notification(std::size_t target) const {
  std::optional<std::size_t> any;
  for (std::size_t i = 0; i < notifications_.size(); ++i) {
    const Notification& nt = notifications_[i];
    if (nt.kind != EventKind::kPaid || nt.first_sent_at < 0) continue;
    if (nt.payment == target) return i;
    if (!any) any = i;
  }
  return any;
}

void Gateway::replay(std::size_t target, Micros offset) {
  const std::optional<std::size_t> captured = captured_notification(target);
  if (!captured) {
    scheduler_.record(sim::TraceKind::kFault,
                      fmt::format("an attacker has no notify to replay yet (the gateway sent none): it replays the "
                                  "first one {} after it is sent",
                                  format_duration(offset)));
    waiting_replays_.push_back(offset);
    return;
  }
  const Notification& nt = notifications_[*captured];
  const PaymentRecord& p = payments_[nt.payment];
  // Byte for byte the request the gateway sent first: its event id, its
  // body, its signature and the time that signature covers.
  Notify n = build(nt.payment, nt.event_id, nt.event_type, nt.kind);
  resign(n, secret_, nt.first_sent_at);
  const Micros age = scheduler_.now() - nt.first_sent_at;
  // Where the gateway's scheme signs a time with a tolerance, a replay past
  // it is a notify the gateway no longer vouches for: taking it is
  // accepted_invalid. Anywhere else it is a duplicate of a genuine notify,
  // as a network copy is: what it may not do is credit again (double_credit).
  const bool stale = profile_.signature_tolerance > 0 && age > profile_.signature_tolerance;
  std::string reason;
  if (stale)
    reason = fmt::format("a replay of {}'s request sent {} ago; its signed timestamp is past {}'s {} tolerance",
                         nt.event_id, format_duration(age), profile_.name, format_duration(profile_.signature_tolerance));
  scheduler_.record(
      sim::TraceKind::kFault,
      fmt::format("an attacker replays notify {} {} ({}), the request the gateway sent at {}, {} later: {}",
                  p.order.order_no, nt.event_type, nt.event_id, format_time(nt.first_sent_at), format_duration(age),
                  stale ? fmt::format("its signed timestamp is past the {} tolerance; it must be refused",
                                      format_duration(profile_.signature_tolerance))
                  : profile_.signature_tolerance > 0
                      ? std::string("still within the signature's tolerance, a duplicate: it may credit nothing more")
                      : fmt::format("{} signs no time, so it is a valid duplicate: it may credit nothing more",
                                    profile_.name)));
  transport_.inject(n, fmt::format("replayed notify {}", p.order.order_no), reason);
}

}  // namespace twice::gateway
