#include "stress/stress_runner.h"

#include "endpoint/http_answer.h"
#include "env/seed.h"

#include <stdlib.h>

#include <algorithm>
#include <barrier>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "env/sqlite_db.h"
#include "gateway/gateway.h"
#include "gateway/retry_profile.h"
#include "stress/real_env.h"
#include "stress/stress_database.h"
#include "twice/schema.h"

namespace twice::stress {
namespace fs = std::filesystem;

namespace {

constexpr Micros kProgressEvery = 200 * kMillisecond;
// Few accounts, each topped up by many orders: the checker's account query
// scans the ledger once per account, so this keeps it linear in the orders.
constexpr long kUsers = 64;
// Orders are seeded this many at a time, as the rounds reach them: a chunk
// takes a few milliseconds on SQLite, so a stop or the time limit is seen
// soon, and a run asked for millions of orders holds only those it reached.
constexpr long kSeedChunk = 4096;

enum class ReplyKind : unsigned char { kNone, kAcked, kNotAcked };

StressOrder seed_row(long index, int groups) {
  const gateway::OrderSpec o = stress_order(index, groups);
  return {o.order_no, o.user, o.amount, o.currency};
}

// What the workers share. Fields written by the barrier's completion function
// (round_, stop_, ...) are read by the workers only between two waits, when
// the completion cannot run: std::barrier's completion step happens after
// every arrival of its phase and before any wait of that phase returns.
struct StressRun {
  StressRun(const StressOptions& o, Handler& h, const Schema& s, const gateway::RetryProfile& p, StressDatabase& d,
            Clock& k, int g)
      : options(o), handler(h), schema(s), profile(p), database(d), checker(d.checker()), clock(k), groups(g),
        workers(g * o.duplicates) {}

  const StressOptions& options;
  Handler& handler;
  const Schema& schema;
  const gateway::RetryProfile& profile;
  StressDatabase& database;
  env::RawConnection& checker;  // the database's own; used only while every worker waits
  Clock& clock;
  int groups;
  int workers;
  std::vector<RealEnv*> envs;  // the workers' Envs, read only while every worker waits

  long round = -1;         // the round the workers were last released into
  long orders_done = 0;     // orders of the rounds every worker has finished
  long seeded = 0;          // orders in the database so far
  std::set<std::string> users_seeded;
  Micros seeding = 0;       // time spent seeding once the rounds started
  bool stop = false;
  std::string stopped_by;
  Status failure;           // the run cannot go on: seeding failed, a service was called
  Micros started_at = 0;
  Micros last_progress = 0;

  // One slot per (order, copy), each written by exactly one worker; grown as orders are seeded.
  std::vector<ReplyKind> replies;
  std::vector<std::uint8_t> redelivered;  // per (order, copy): how often its worker sent it again (<= 100)

  gateway::PaymentRecord payment(long order) const {
    gateway::PaymentRecord p;
    p.order = stress_order(order, groups);
    p.transaction_id = stress_notify(p.order).transaction_id;
    p.settled = true;
    p.attempts = p.deliveries = options.duplicates;
    for (int c = 0; c < options.duplicates; ++c) {
      const auto slot = static_cast<std::size_t>(order * options.duplicates + c);
      if (replies[slot] == ReplyKind::kAcked) p.acked = true;
      p.attempts += redelivered[slot];
      p.deliveries += redelivered[slot];
    }
    return p;
  }

  // Whether the round's orders show a violation of kInvariantsJudgedPerRound.
  // Only those: the judgement is given this round's payments alone, and
  // wrong_amount read the account of order 64, credited by an earlier round,
  // as over-credited: a correct handler was "stopped by first violation"
  // there, then judged clean over all its orders.
  bool round_violated(long first_order, long end_order) const {
    std::vector<gateway::PaymentRecord> payments;
    for (long o = first_order; o < end_order; ++o) payments.push_back(payment(o));
    const check::Verdict verdict = check::judge(checker, schema, payments, {});
    return std::any_of(verdict.violations.begin(), verdict.violations.end(), [](const check::Violation& v) {
      return std::any_of(std::begin(kInvariantsJudgedPerRound), std::end(kInvariantsJudgedPerRound),
                         [&](const char* judged) { return v.invariant == judged; });
    });
  }

  // Seeds orders [seeded, end): the first chunk with the schema's tables,
  // the others through the checker's connection.
  Status seed_until(long end) {
    std::vector<StressOrder> rows;
    rows.reserve(static_cast<std::size_t>(end - seeded));
    for (long i = seeded; i < end; ++i) rows.push_back(seed_row(i, groups));
    Status s;
    if (seeded == 0) {
      s = database.seed(schema, rows);
      for (const auto& r : rows) users_seeded.insert(r.user);
    } else {
      s = add_stress_orders(checker, schema, rows, users_seeded);
    }
    if (!s.ok()) return s;
    seeded = end;
    replies.resize(static_cast<std::size_t>(seeded * options.duplicates), ReplyKind::kNone);
    redelivered.resize(replies.size(), 0);
    return Status::OK();
  }

  // The barrier's completion: runs on the last worker to arrive, every other
  // worker parked, so the database is quiescent. Ends round `round` and
  // releases the next one (seeding its orders first if need be), or tells
  // everyone to stop.
  void next_round() {
    const Micros now = clock.now();
    if (round < 0) {
      started_at = now;
    } else {
      const long first = round * groups;
      orders_done = std::min(options.orders, first + groups);
      if (options.stop_at_first_violation && round_violated(first, orders_done)) stop_because("first violation");
    }
    for (const RealEnv* env : envs) {
      if (env->service_called().empty()) continue;
      failure = Status::error(fmt::format(
          "stress mode has no external services: {} calls Env::call (service {}); test it with `twice run "
          "--handler {}`",
          options.handler->name, env->service_called(), options.handler->name));
      stop_because("error");
      break;
    }
    if (orders_done >= options.orders) stop = true;
    if (options.time_limit > 0 && now - started_at >= options.time_limit) stop_because("time limit");
    if (options.stop && options.stop->load()) stop_because("interrupted");
    const long needed = std::min(options.orders, (round + 2) * groups);
    if (!stop && needed > seeded) {
      const Micros seed_start = clock.now();
      const Status s = seed_until(std::min(options.orders, std::max(needed, seeded + kSeedChunk)));
      seeding += clock.now() - seed_start;
      if (!s.ok()) {
        failure = s;
        stop_because("error");
      }
    }
    if (!stop) ++round;
    if (options.on_progress && (stop || now - last_progress >= kProgressEvery)) {
      last_progress = now;
      options.on_progress(
          StressProgress{orders_done * options.duplicates, options.orders * options.duplicates, now - started_at});
    }
  }

  void stop_because(const char* why) {
    if (!stop) stopped_by = why;
    stop = true;
  }

  // One copy, and again while it is not acked, up to options.redeliveries
  // times: the gateway's retries, each after a backoff with jitter, as a
  // gateway waits before it retries (far shorter than a gateway's minutes).
  void deliver(RealEnv& env, std::minstd_rand& jitter, long order, int copy) {
    const auto slot = static_cast<std::size_t>(order * options.duplicates + copy);
    const Notify notify = stress_notify(stress_order(order, groups));
    Micros backoff = options.redelivery_backoff;
    for (int attempt = 0;; ++attempt) {
      Reply reply = endpoint::answer(handler, notify, env);
      if (std::optional<Reply> early = env.take_early_reply()) reply = *early;  // the gateway already has it
      if (env.worker_db().in_transaction()) env.worker_db().exec("ROLLBACK");  // the connection goes back to the pool
      const bool acked = profile.is_ack(reply);
      replies[slot] = acked ? ReplyKind::kAcked : ReplyKind::kNotAcked;
      redelivered[slot] = static_cast<std::uint8_t>(attempt);
      // A handler that called a service ends the run: retrying it shows nothing.
      if (acked || attempt >= options.redeliveries || !env.service_called().empty()) return;
      if (backoff > 0) {
        std::uniform_int_distribution<Micros> pick(backoff / 2, backoff);
        clock.sleep(pick(jitter));
        backoff = std::min(backoff * 2, std::max(options.redelivery_backoff_max, options.redelivery_backoff));
      }
    }
  }
};

}  // namespace

double StressReport::deliveries_per_second() const {
  const Micros delivering = elapsed - seeding;
  return delivering > 0 ? static_cast<double>(deliveries + redeliveries) * kSecond / static_cast<double>(delivering)
                        : 0.0;
}

double StressReport::violation_rate() const {
  return orders_run > 0 ? static_cast<double>(violating_orders) / static_cast<double>(orders_run) : 0.0;
}

gateway::OrderSpec stress_order(long index, int groups) {
  gateway::OrderSpec o;
  o.order_no = fmt::format("S-{}", index);
  o.user = fmt::format("user-{}", index / std::max(groups, 1) % kUsers);
  o.amount = 100 + index % 900;
  o.currency = "CNY";
  return o;
}

Notify stress_notify(const gateway::OrderSpec& order) {
  Notify n;
  n.event_id = "EVT-" + order.order_no;
  n.out_trade_no = order.order_no;
  n.transaction_id = "TXN-" + order.order_no;
  n.amount = order.amount;
  n.currency = order.currency;
  n.event_type = "TRANSACTION.SUCCESS";
  n.gateway = "wechat-v3";  // the profile whose acks run_stress() counts
  n.raw_payload = fmt::format(R"({{"out_trade_no":"{}","transaction_id":"{}","amount":{{"total":{},"currency":"{}"}}}})",
                              n.out_trade_no, n.transaction_id, n.amount, n.currency);
  return n;
}

Status seed_stress_database(sqlite3* conn, const Schema& schema, long orders, int groups) {
  std::vector<env::SeedOrder> seed;
  seed.reserve(static_cast<std::size_t>(orders));
  for (long i = 0; i < orders; ++i) {
    const gateway::OrderSpec o = stress_order(i, groups);
    seed.push_back({o.order_no, o.user, o.amount, o.currency});
  }
  return env::seed_database(conn, schema, seed);
}

Status run_stress(const StressOptions& options, StressReport& report) {
  if (!options.handler) return Status::error("no handler");
  if (options.threads < 1 || options.threads > 1024) return Status::error("threads must be within 1..1024");
  if (options.duplicates < 1 || options.duplicates > options.threads)
    return Status::error(fmt::format("duplicates must be within 1..threads ({})", options.threads));
  if (options.orders < 1) return Status::error("orders must be at least 1");
  if (options.redeliveries < 0 || options.redeliveries > 100) return Status::error("redeliveries must be within 0..100");
  const gateway::RetryProfile* profile = gateway::find_profile("wechat-v3");
  if (!profile) return Status::error("no wechat-v3 profile");

  const int groups = options.threads / options.duplicates;
  std::unique_ptr<StressDatabase> own_database;
  StressDatabase* database = options.database;
  if (!database) {
    if (Status s = open_stress_database(options.engine, options.busy_timeout, options.temp_parent, own_database);
        !s.ok())
      return s;
    database = own_database.get();
  }
  RealClock clock;
  RealLocks locks(clock);
  std::unique_ptr<Handler> handler = options.handler->make();
  const Schema& schema = handler->schema();
  StressRun run(options, *handler, schema, *profile, *database, clock, groups);
  // The tables and the first rounds' orders; the rest as the rounds reach them.
  if (Status s = run.seed_until(std::min(options.orders, std::max<long>(groups, kSeedChunk))); !s.ok())
    return Status::error(fmt::format("handler {}: {}", options.handler->name, s.message()));

  // Every connection is open before the first round, so a worker never fails
  // halfway and leaves the others waiting at the barrier.
  std::vector<std::unique_ptr<RealEnv>> envs;
  for (int w = 0; w < run.workers; ++w) {
    envs.push_back(std::make_unique<RealEnv>(database->open_worker(), locks, clock, fmt::format("W{}", w)));
    if (!envs.back()->status().ok()) return envs.back()->status();
    run.envs.push_back(envs.back().get());
  }

  // std::barrier wants a completion that cannot throw: one that did would
  // leave every worker waiting, so std::terminate is the honest answer.
  auto completion = [&run]() noexcept { run.next_round(); };
  std::barrier barrier(run.workers, completion);
  std::vector<std::jthread> workers;
  workers.reserve(static_cast<std::size_t>(run.workers));
  for (int w = 0; w < run.workers; ++w) {
    workers.emplace_back([&run, &barrier, env = envs[static_cast<std::size_t>(w)].get(), w] {
      const int group = w / run.options.duplicates;
      const int copy = w % run.options.duplicates;
      std::minstd_rand jitter(static_cast<std::uint_fast32_t>(w + 1));  // a fixed seed per worker
      for (;;) {
        barrier.arrive_and_wait();
        if (run.stop) return;
        const long order = run.round * run.groups + group;
        if (order < run.options.orders) run.deliver(*env, jitter, order, copy);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const Micros finished_at = clock.now();
  run.envs.clear();
  if (!run.failure.ok()) return run.failure;

  report = StressReport{};
  report.handler = options.handler->name;
  report.threads = run.workers;
  report.duplicates = options.duplicates;
  report.orders_planned = options.orders;
  report.orders_run = run.orders_done;
  report.deliveries = run.orders_done * options.duplicates;
  report.elapsed = finished_at - run.started_at;
  report.seeding = run.seeding;
  report.stopped_by = run.stopped_by;
  report.database = database->description();
  envs.clear();  // the workers' connections close; the checker reads a quiet file

  std::vector<gateway::PaymentRecord> payments;
  payments.reserve(static_cast<std::size_t>(report.orders_run));
  for (long o = 0; o < report.orders_run; ++o) {
    payments.push_back(run.payment(o));
    for (int c = 0; c < options.duplicates; ++c) {
      const auto slot = static_cast<std::size_t>(o * options.duplicates + c);
      if (run.replies[slot] == ReplyKind::kAcked) ++report.acked;
      report.redeliveries += run.redelivered[slot];
    }
  }
  report.verdict = check::judge(database->checker(), schema, payments, {});
  std::set<std::string> orders_hit;
  for (const auto& v : report.verdict.violations) {
    ++report.violations_per_invariant[v.invariant];
    if (v.subject.starts_with("S-")) orders_hit.insert(v.subject);
  }
  report.violating_orders = static_cast<long>(orders_hit.size());
  return Status::OK();
}

}  // namespace twice::stress
