#include "blackbox/blackbox_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "blackbox/http_post.h"
#include "blackbox/wire_format.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario_profile.h"

namespace twice::blackbox {
namespace {

// Requests refused in a row before a run without --endpoint-command gives up
// on the service: nobody will start it again.
constexpr int kRefusedBeforeGivingUp = 3;

// A run whose every request was refused: the command says to start the
// service first, or that it stopped answering mid-test.
Status nothing_listens(const HttpEndpoint& endpoint, int refused) {
  return Status::error(fmt::format("nothing listens on {} (connection refused, {} requests)", endpoint.url, refused));
}

using SteadyClock = std::chrono::steady_clock;

// The fault plan's randomness: one stream per notification, so that what an
// attempt draws depends on the seed and the notification only, never on how
// the threads happened to run.
class FaultDraws {
 public:
  FaultDraws(std::uint64_t seed, std::uint64_t stream) : state_(seed ^ (0x9E3779B97F4A7C15ull * (stream + 1))) {}
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  bool chance(double p) { return p > 0 && static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
  Micros between(Micros lo, Micros hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<Micros>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  std::string nonce() {  // 32 letters and digits
    static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string out;
    for (int i = 0; i < 32; ++i) out += kChars[next() % (sizeof kChars - 1)];
    return out;
  }

 private:
  std::uint64_t state_;
};

// One notification the gateway sends (and retries), or one forged notify.
struct Planned {
  std::size_t payment = 0;
  std::string event_id;
  std::string event_type;
  EventKind kind = EventKind::kPaid;
  Micros at = 0;  // virtual time
  bool forged = false;
};

struct AttemptState {
  std::mutex mutex;
  std::condition_variable changed;
  int pending = 0;
  bool acked = false;
};

class Player final : public LedgerView {
 public:
  explicit Player(const BlackboxOptions& o)
      : options_(o), scenario_(*o.scenario), profile_(*gateway::profile_of(*o.scenario)),
        timeout_(request_timeout(o)) {}

  void plan() {
    for (std::size_t i = 0; i < scenario_.orders.size(); ++i) {
      gateway::PaymentRecord p;
      p.order = scenario_.orders[i];
      p.transaction_id = fmt::format("4200{:06}", i + 1);
      payments_.push_back(p);
      if (p.order.paid_twice) {
        p.transaction_id = fmt::format("4300{:06}", i + 1);
        p.second_payment = true;
        p.order.paid_at += kSecond;
        p.order.refund_after = 0;
        payments_.push_back(std::move(p));
      }
    }
    for (std::size_t i = 0; i < payments_.size(); ++i) {
      const gateway::OrderSpec& o = payments_[i].order;
      const std::string id = payments_[i].second_payment ? fmt::format("evt-{}-p2", o.order_no) : fmt::format("evt-{}", o.order_no);
      if (o.paid) planned_.push_back({i, id, profile_.paid_event_type, EventKind::kPaid, o.paid_at, false});
      if (o.paid && o.refund_after > 0)
        planned_.push_back({i, id + "-refund", profile_.refunded_event_type, EventKind::kRefunded, o.paid_at + o.refund_after, false});
      if (!o.paid && o.closed_at >= 0 && !profile_.closed_event_type.empty())
        planned_.push_back({i, id + "-close", profile_.closed_event_type, EventKind::kClosed, o.closed_at, false});
    }
    // Forged notifies go first to orders nobody pays: a credit there is unpaid_credit.
    FaultDraws draws(options_.seed, 0xF0F0);
    std::vector<std::size_t> unpaid;
    for (std::size_t i = 0; i < payments_.size(); ++i)
      if (!payments_[i].order.paid) unpaid.push_back(i);
    for (int k = 0; k < scenario_.attacks.forged_signature && !payments_.empty(); ++k) {
      const std::size_t target =
          unpaid.empty() ? draws.next() % payments_.size() : unpaid[draws.next() % unpaid.size()];
      planned_.push_back({target, fmt::format("evt-forged-{}", k + 1), profile_.paid_event_type, EventKind::kPaid,
                          draws.between(0, scenario_.attacks.window), true});
    }
  }

  Status play_all() {
    start_ = SteadyClock::now();
    std::vector<std::jthread> threads;
    std::atomic<std::size_t> played{0};
    for (std::size_t k = 0; k < planned_.size(); ++k)
      threads.emplace_back([this, k, &played] {
        play(k, planned_[k], FaultDraws(options_.seed, k));
        ++played;
      });
    const Status nemesis = run_nemesis();
    report_progress_until([&] { return played.load() == planned_.size(); });
    threads.clear();  // joins
    if (nobody_listens_) return nothing_listens(options_.endpoint, refused_);
    if (stopped()) return Status::error(kStoppedNow);  // nothing drained, nothing judged
    if (!nemesis.ok()) return nemesis;
    // The requests the gateway gave up on may still be running in the
    // service: judged before they end, their writes would be missed here and
    // land in the next run. Their connections are still open: the service
    // ends each by answering or closing it.
    const auto drain_start = SteadyClock::now();
    const int open = static_cast<int>(open_requests_.size());
    still_running_ = wait_until_ended(open_requests_, options_.drain_timeout);
    ended_late_ = open - still_running_;
    drained_ = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - drain_start).count();
    std::this_thread::sleep_for(std::chrono::microseconds(options_.quiet_period));
    elapsed_ = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_).count();
    return Status::OK();
  }

  std::optional<PaymentState> by_order(std::string_view order_no) const override {
    return find([&](const gateway::PaymentRecord& p) { return p.order.order_no == order_no && !p.second_payment; });
  }
  std::optional<PaymentState> by_transaction(std::string_view id) const override {
    return find([&](const gateway::PaymentRecord& p) { return p.transaction_id == id; });
  }

  // The requests so far, by outcome, and the answers by status.
  BlackboxRun counts() const {
    BlackboxRun r;
    r.seed = options_.seed;
    r.requests = requests_;
    r.answered = answered_;
    r.acks = acks_;
    r.timed_out = timed_out_;
    r.broken = broken_;
    r.refused = refused_;
    std::lock_guard lock(ledger_mutex_);
    r.statuses = statuses_;
    return r;
  }

  BlackboxRun result() const {
    BlackboxRun r = counts();
    r.payments = payments_;
    r.ended_late = ended_late_;
    r.still_running = still_running_;
    r.drained = drained_;
    {
      std::lock_guard lock(ledger_mutex_);
      r.broken_example = broken_example_;
      r.timeout_example = timeout_example_;
    }
    r.forged = forged_;
    r.kills = kills_;
    std::vector<std::tuple<std::size_t, int, std::string>> plan = plan_;
    std::sort(plan.begin(), plan.end());
    for (auto& entry : plan) r.fault_plan.push_back(std::get<2>(entry));
    r.elapsed = elapsed_;
    return r;
  }

 private:
  template <typename Match>
  std::optional<PaymentState> find(Match match) const {
    std::lock_guard lock(ledger_mutex_);
    for (const auto& p : payments_) {
      if (!match(p)) continue;
      PaymentState s{p.order.order_no, p.transaction_id, p.order.amount, p.order.currency, PaymentState::Stage::kWaiting};
      if (p.refunded) s.stage = PaymentState::Stage::kRefunded;
      else if (p.settled) s.stage = PaymentState::Stage::kPaid;
      else if (p.closed) s.stage = PaymentState::Stage::kClosed;
      return s;
    }
    return std::nullopt;
  }

  // kill -9 at the fault plan's moments, down for the scenario's restart
  // range, up again; on this (the starting) thread, while the gateway plays.
  Status run_nemesis() {
    if (!options_.process || options_.kills <= 0) return Status::OK();
    FaultDraws draws(options_.seed, 0xDEAD);
    std::vector<Micros> moments;
    for (int k = 0; k < options_.kills; ++k) moments.push_back(draws.between(0, options_.kill_window));
    std::sort(moments.begin(), moments.end());
    for (const Micros at : moments) {
      if (!sleep_until(std::max(SteadyClock::now(), start_ + std::chrono::microseconds(at)))) break;
      options_.process->kill9();
      ++kills_;
      // Down for the restart range, and up again even when stopped now: the next run's service.
      sleep_for(scaled(draws.between(scenario_.restart_min, scenario_.restart_max)));
      if (Status s = options_.process->restart(); !s.ok()) return s;
    }
    return Status::OK();
  }

  // Until `done`, says how the run goes every BlackboxOptions::progress_every.
  template <class Done>
  void report_progress_until(Done done) const {
    if (!options_.on_progress || options_.progress_every <= 0) return;
    auto next = start_ + std::chrono::microseconds(options_.progress_every);
    while (!done() && !stopped()) {
      if (SteadyClock::now() < next) {
        std::this_thread::sleep_for(std::chrono::microseconds(kStopCheck));
        continue;
      }
      options_.on_progress(
          std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_).count(), counts());
      next += std::chrono::microseconds(options_.progress_every);
    }
  }

  // Stopped now (BlackboxOptions::stop_now), or nobody listens: every wait
  // ends, nothing more is sent.
  bool stopped() const { return (options_.stop_now && options_.stop_now->stopped()) || nobody_listens_.load(); }

  // Sleeps until `when`; false, and sooner, once stopped.
  bool sleep_until(SteadyClock::time_point when) const {
    for (;;) {
      if (stopped()) return false;
      const auto now = SteadyClock::now();
      if (now >= when) return true;
      std::this_thread::sleep_for(std::min<SteadyClock::duration>(when - now, std::chrono::microseconds(kStopCheck)));
    }
  }
  bool sleep_for(SteadyClock::duration d) const { return sleep_until(SteadyClock::now() + d); }

  // Waits on an attempt's state until `done` holds, `until` passes (if given),
  // or the run is stopped now.
  template <class Done>
  void wait(std::unique_lock<std::mutex>& lock, AttemptState& state, Done done,
            std::optional<SteadyClock::time_point> until = std::nullopt) const {
    while (!done() && !stopped()) {
      auto next = SteadyClock::now() + std::chrono::microseconds(kStopCheck);
      if (until) {
        if (SteadyClock::now() >= *until) return;
        next = std::min(next, *until);
      }
      state.changed.wait_until(lock, next, done);
    }
  }

  SteadyClock::duration scaled(Micros virtual_time) const {
    return std::chrono::microseconds(static_cast<Micros>(static_cast<double>(virtual_time) / options_.time_scale));
  }

  Notify build(const Planned& n) const {
    const gateway::PaymentRecord& p = payments_[n.payment];
    Notify out;
    out.event_id = n.event_id;
    out.out_trade_no = p.order.order_no;
    out.transaction_id = n.forged ? "4999999999" : p.transaction_id;
    out.amount = p.order.amount;
    out.currency = p.order.currency;
    out.event_type = n.event_type;
    out.refund_amount = n.kind == EventKind::kRefunded ? p.order.amount : 0;
    out.gateway = profile_.name;
    return out;
  }

  void settle(const Planned& n) {
    if (n.forged) return;
    std::lock_guard lock(ledger_mutex_);
    gateway::PaymentRecord& p = payments_[n.payment];
    if (n.kind == EventKind::kPaid) p.settled = true;
    if (n.kind == EventKind::kRefunded) p.refunded = true;
    if (n.kind == EventKind::kClosed) p.closed = true;
  }

  void record_ack(const Planned& n) {
    std::lock_guard lock(ledger_mutex_);
    gateway::PaymentRecord& p = payments_[n.payment];
    const Micros now = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_).count();
    if (n.kind == EventKind::kPaid && !p.acked) {
      p.acked = true;
      p.acked_at = now;
    }
    if (n.kind == EventKind::kRefunded && p.refund_acked_at < 0) p.refund_acked_at = now;
  }

  void record_plan(std::size_t index, int attempt, const Planned& n, Micros delay, bool lost,
                   const std::vector<Micros>& copies, bool ack_lost) {
    std::string line = fmt::format("{}{} attempt {}: delay {}us{}", n.event_id, n.forged ? " (forged)" : "", attempt,
                                   delay, lost ? ", lost" : "");
    if (!copies.empty()) {
      line += fmt::format(", {} cop{} (", copies.size(), copies.size() == 1 ? "y" : "ies");
      for (std::size_t c = 0; c < copies.size(); ++c) line += fmt::format("{}+{}us", c ? ", " : "", copies[c]);
      line += ")";
    }
    if (ack_lost) line += ", ack lost";
    std::lock_guard lock(ledger_mutex_);
    plan_.emplace_back(index, attempt, std::move(line));
  }

  void count_attempt(const Planned& n) {
    if (n.forged) return;
    std::lock_guard lock(ledger_mutex_);
    ++payments_[n.payment].attempts;
  }

  // One copy of one attempt on the wire; its own thread.
  void send(const Planned& n, std::shared_ptr<const WireRequest> request, std::shared_ptr<AttemptState> state,
            SteadyClock::time_point when) {
    if (!sleep_until(when)) {  // stopped now: this copy is never sent
      std::lock_guard lock(state->mutex);
      --state->pending;
      state->changed.notify_all();
      return;
    }
    ++requests_;
    OpenRequest gave_up;
    const HttpOutcome out = post(options_.endpoint, *request, timeout_, &gave_up, options_.stop_now);
    bool ack = false;
    switch (out.kind) {
      case HttpOutcome::Kind::kAnswered:
        ++answered_;
        ack = profile_.is_ack(Reply{out.http_status, out.body});
        if (ack) ++acks_;
        break;
      case HttpOutcome::Kind::kTimedOut: ++timed_out_; break;
      case HttpOutcome::Kind::kRefused: ++refused_; break;
      case HttpOutcome::Kind::kBroken: ++broken_; break;
    }
    // Refused again and again: nothing listens any more, and without
    // --endpoint-command nobody starts it. The run ends now, where it waited
    // out the gateway's whole retry schedule (a quarter of an hour at the
    // default time scale), silent. In a row, not "with none answered": a
    // service that answered this run's first request and then died left the
    // run waiting out that schedule (seen under load, where the service's
    // last answer fell in the second run instead of the first).
    if (out.kind != HttpOutcome::Kind::kRefused) refused_in_a_row_ = 0;
    else if (++refused_in_a_row_ >= kRefusedBeforeGivingUp && !options_.process) nobody_listens_ = true;
    {
      std::lock_guard lock(ledger_mutex_);
      if (out.kind == HttpOutcome::Kind::kAnswered) ++statuses_[out.http_status];
      if (out.kind == HttpOutcome::Kind::kBroken && broken_example_.empty()) broken_example_ = out.error;
      if (out.kind == HttpOutcome::Kind::kTimedOut && timeout_example_.empty()) timeout_example_ = out.error;
      if (gave_up.holds_connection()) open_requests_.push_back(std::move(gave_up));
      // The service may have acted on a request it did not answer (timed out, or killed mid-request).
      if (!n.forged && (out.kind == HttpOutcome::Kind::kAnswered || out.kind == HttpOutcome::Kind::kTimedOut ||
                        (out.kind == HttpOutcome::Kind::kBroken && out.sent)))
        ++payments_[n.payment].deliveries;
    }
    std::lock_guard lock(state->mutex);
    if (ack) state->acked = true;
    --state->pending;
    state->changed.notify_all();
  }

  // The gateway's side of one notification: settle, send, wait, retry.
  void play(std::size_t index, const Planned& n, FaultDraws draws) {
    if (!sleep_until(start_ + scaled(n.at))) return;
    settle(n);
    if (n.forged) ++forged_;
    const Notify notify = build(n);
    // When its payment settled (or its refund, its close): the time every
    // resend of this notification carries; only the signature's is new.
    const std::int64_t happened =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::size_t schedule = profile_.retry_after.size() + 1;
    const int max_attempts = n.forged ? 1
                             : scenario_.max_attempts > 0
                                 ? static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(scenario_.max_attempts), schedule))
                                 : static_cast<int>(schedule);
    std::vector<std::jthread> senders;
    for (int attempt = 1; attempt <= max_attempts && !stopped(); ++attempt) {
      count_attempt(n);
      const SteadyClock::time_point attempt_start = SteadyClock::now();
      // The fault plan of this attempt, drawn in a fixed order.
      const Micros delay = draws.between(scenario_.delay_min, scenario_.delay_max);
      const bool lost = draws.chance(scenario_.request_loss);
      std::vector<Micros> copies;
      for (int c = 0; c < scenario_.max_copies && draws.chance(scenario_.duplicate); ++c)
        copies.push_back(draws.between(scenario_.duplicate_delay_min, scenario_.duplicate_delay_max));
      const bool ack_lost = draws.chance(scenario_.ack_loss);
      const std::string nonce = draws.nonce();
      record_plan(index, attempt, n, delay, lost, copies, ack_lost);
      const std::int64_t unix_now =
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
      StatusOr<WireRequest> encoded =
          encode(notify, profile_.name, *options_.keys, gateway::WireTimes{unix_now, happened, happened}, nonce, n.forged);
      if (!encoded.ok()) return;  // check_options() refused the profile already
      auto request = std::make_shared<const WireRequest>(std::move(encoded).value());
      auto state = std::make_shared<AttemptState>();
      state->pending = (lost ? 0 : 1) + static_cast<int>(copies.size());
      if (!lost) senders.emplace_back([=, this] { send(n, request, state, attempt_start + scaled(delay)); });
      for (const Micros copy_delay : copies)
        senders.emplace_back([=, this] { send(n, request, state, attempt_start + scaled(delay + copy_delay)); });
      bool acked = false;
      {
        std::unique_lock lock(state->mutex);
        if (lost) {  // the gateway waits out its timeout; a copy may still be answered
          wait(lock, *state, [&] { return state->acked; },
               attempt_start + scaled(delay) + std::chrono::microseconds(timeout_));
        } else {
          wait(lock, *state, [&] { return state->acked || state->pending == 0; });
        }
        acked = state->acked;
      }
      if (n.forged) break;
      if (acked && !ack_lost) {
        record_ack(n);
        break;
      }
      // A lost ack: the gateway saw nothing and waits its timeout out.
      if (acked) sleep_until(attempt_start + std::chrono::microseconds(timeout_));
      if (attempt < max_attempts) sleep_for(scaled(profile_.retry_after[static_cast<std::size_t>(attempt - 1)]));
    }
    senders.clear();  // joins the copies still on the wire
  }

  const BlackboxOptions& options_;
  const gateway::Scenario& scenario_;
  const gateway::RetryProfile profile_;  // the scenario's: its [gateway] figures in place of the profile's
  const Micros timeout_;
  SteadyClock::time_point start_;
  std::vector<Planned> planned_;
  mutable std::mutex ledger_mutex_;
  std::vector<gateway::PaymentRecord> payments_;
  std::atomic<int> requests_{0}, answered_{0}, acks_{0}, timed_out_{0}, broken_{0}, refused_{0}, forged_{0};
  std::atomic<int> refused_in_a_row_{0};  // since the last request that was not refused
  std::atomic<bool> nobody_listens_{false};
  std::map<int, int> statuses_;     // under ledger_mutex_
  std::string broken_example_;      // under ledger_mutex_
  std::string timeout_example_;     // under ledger_mutex_
  std::vector<OpenRequest> open_requests_;  // under ledger_mutex_ while the gateway plays
  int ended_late_ = 0, still_running_ = 0;
  Micros drained_ = 0;
  int kills_ = 0;
  std::vector<std::tuple<std::size_t, int, std::string>> plan_;  // (notification, attempt, line)
  Micros elapsed_ = 0;
};

}  // namespace

Micros request_timeout(const BlackboxOptions& o) {
  const std::optional<gateway::RetryProfile> p = gateway::profile_of(*o.scenario);
  const Micros scaled = p ? static_cast<Micros>(static_cast<double>(p->timeout) / o.time_scale) : 0;
  return std::max(scaled, o.min_timeout > 0 ? o.min_timeout : kSecond);
}

Status check_options(const BlackboxOptions& o) {
  if (!o.scenario || !o.schema || !o.database || !o.keys) return Status::error("black-box run without its pieces");
  if (!(o.time_scale >= 1.0 && o.time_scale <= 1e7))
    return Status::error(fmt::format("--time-scale {} is out of range; give 1 (real time) to 10000000", o.time_scale));
  if (!gateway::find_profile(o.scenario->profile) || !has_wire_format(o.scenario->profile))
    return Status::error(fmt::format("{}: profile {} has no wire format in black-box mode; use one of {}",
                                     o.scenario->source.empty() ? o.scenario->name : o.scenario->source,
                                     o.scenario->profile, wire_formats()));
  return Status::OK();
}

StatusOr<BlackboxRun> run_blackbox(const BlackboxOptions& o) {
  if (Status s = check_options(o); !s.ok()) return s;
  if (Status s = o.database->seed(*o.schema, o.scenario->orders); !s.ok())
    return Status::error(fmt::format("seeding the service's database failed: {}; fix the oracle file", s.message()));
  Player player(o);
  player.plan();
  if (o.query_server) o.query_server->attach(&player);
  const Status played = player.play_all();
  if (o.query_server) o.query_server->attach(nullptr);
  if (!played.ok()) return played;  // kStoppedNow too
  BlackboxRun run = player.result();
  if (run.requests > 0 && run.answered == 0) {
    if (run.refused == run.requests) return nothing_listens(o.endpoint, run.refused);
    if (run.timed_out == 0)
      return Status::error(fmt::format("the service at {} gave no HTTP answer to any of {} requests ({}); is an HTTP "
                                       "server listening on that port?",
                                       o.endpoint.url, run.requests, run.broken_example));
    return Status::error(fmt::format(
        "the service at {} answered none of {} requests within {} each ({}); is it stuck? (--min-timeout to wait longer)",
        o.endpoint.url, run.requests, format_duration(request_timeout(o)), run.timeout_example));
  }
  check::CheckOptions check;
  check.payload_required = o.scenario->payload_required;
  run.verdict = check::judge(o.database->connection(), *o.schema, run.payments, {}, {}, check);
  return run;
}

std::vector<std::string> not_judged(const gateway::Scenario& s, bool nemesis) {
  std::vector<std::string> out = {
      "ack_before_commit: needs the moment the service committed, which twice cannot see from outside",
      "accepted_invalid: twice cannot tell which request changed a row (a forged notify that credits an unpaid order "
      "shows as unpaid_credit)"};
  const gateway::Attacks& a = s.attacks;
  if (a.wrong_amount + a.wrong_currency + a.unknown_order + a.replayed > 0)
    out.push_back("attacks other than forged_signature are not sent in black-box mode");
  if (!nemesis && s.crash > 0)
    out.push_back("crash: twice did not start the service (--endpoint-command), so it kills nothing");
  if (s.pause > 0 || s.mq_redelivery > 0)
    out.push_back("pause and mq_redelivery act inside the service: not injected");
  if (s.second_signal > 0) out.push_back("second_signal: a second success event is not sent in black-box mode");
  if (!s.required_effects.empty())
    out.push_back("external services' effects (required_effects) live outside the database: not judged");
  if (s.reconciler || s.close_after > 0)
    out.push_back("background jobs ([merchant]) are the service's own: twice runs none of them");
  if (const auto* p = gateway::find_profile(s.profile); p && p->head_of_line)
    out.push_back("the head-of-line queue of " + s.profile + " is not kept: notifications are sent independently");
  return out;
}

}  // namespace twice::blackbox
