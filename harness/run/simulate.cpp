#include "run/simulate.h"

#include <atomic>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "engine/pg_cluster.h"
#include "engine/pg_db.h"
#include "engine/sqlite_raw_connection.h"
#include "env/lock_service.h"
#include "env/seeded_database.h"
#include "env/sqlite_db.h"
#include "env/task_env.h"
#include "gateway/gateway.h"
#include "sim/scheduler.h"
#include "twice/job.h"

namespace twice::run {

bool RunResult::has(std::string_view invariant) const {
  for (const auto& v : verdict.violations)
    if (v.invariant == invariant) return true;
  return false;
}

namespace {

// The rows the run starts from: every order waiting for payment, every
// user's account at zero.
std::vector<engine::PgDatabase::Statement> seed_statements(const gateway::Scenario& scenario, const Schema& schema) {
  std::vector<engine::PgDatabase::Statement> out;
  std::set<std::string> users;
  for (const auto& o : scenario.orders) {
    out.push_back({schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}});
    if (users.insert(o.user).second) out.push_back({schema.insert_account_sql, {o.user}});
  }
  return out;
}

Status seed_rows(engine::RawConnection& conn, const gateway::Scenario& scenario, const Schema& schema) {
  std::set<std::string> users;
  for (const auto& o : scenario.orders) {
    if (auto r = conn.query(schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}); !r.ok())
      return Status::error("seeding order " + o.order_no + ": " + r.status.to_string());
    if (users.insert(o.user).second) {
      if (auto r = conn.query(schema.insert_account_sql, {o.user}); !r.ok())
        return Status::error("seeding account " + o.user + ": " + r.status.to_string());
    }
  }
  return Status::OK();
}

// The database the run starts from: the handler's schema, then its rows.
void seed_database(sqlite3* conn, const gateway::Scenario& scenario, const Schema& schema) {
  if (auto err = env::exec_script(conn, schema.setup_sql); !err.empty())
    throw std::runtime_error("the handler's schema: " + err);
  engine::SqliteRawConnection raw(conn);
  if (Status s = seed_rows(raw, scenario, schema); !s.ok()) throw std::runtime_error(s.message());
}

// Everything seed_database() reads: runs with equal keys start from equal databases.
std::string seed_key(const gateway::Scenario& scenario, const Schema& schema, Engine engine = Engine::kSqlite) {
  std::string key;
  auto add = [&key](std::string_view field) { key += fmt::format("{}:{};", field.size(), field); };
  add(schema.setup_sql_for(engine));
  add(schema.insert_order_sql);
  add(schema.insert_account_sql);
  for (const auto& o : scenario.orders) {
    add(o.order_no);
    add(o.user);
    add(std::to_string(o.amount));
    add(o.currency);
  }
  return key;
}

std::string describe_reply(const Reply& r) {
  std::string body = r.body.size() > 60 ? r.body.substr(0, 57) + "..." : r.body;
  return fmt::format("HTTP {} {}", r.http_status, body);
}

// Everything one run owns, so that tasks and timers can reach it.
class Run {
 public:
  Run(const RunSpec& spec, RunResult& result, sim::Choices& choices, engine::RawConnection& checker_conn,
      Handler& handler, std::string db_name, engine::PgDatabase* postgres = nullptr)
      : scenario_(*spec.scenario),
        result_(result),
        checker_conn_(checker_conn),
        handler_(handler),
        connections_(std::move(db_name)),
        scheduler_(spec.strategy, choices, result.trace, limits(scenario_), faults()),
        locks_(scheduler_),
        gateway_(scenario_, *gateway::find_profile(scenario_.profile), scheduler_,
                 [this](gateway::Gateway::Delivery d) { return deliver(std::move(d)); }) {
    if (postgres) pg_run_ = std::make_unique<engine::PgRun>(scheduler_, *postgres);
  }

  void run() {
    gateway_.on_ack([this](std::size_t payment) { check_ack(payment); });
    gateway_.start();
    start_jobs();
    scheduler_.run();
    confirm_early_acks();
    result_.steps = scheduler_.steps();
    result_.end_time = scheduler_.now();
    check::CheckOptions options;
    options.payload_required = scenario_.payload_required;
    result_.verdict = check::check_run(checker_conn_, handler_.schema(), gateway_.payments(), scheduler_.stuck(),
                                       observed_, options);
  }

 private:
  static sim::SchedulerLimits limits(const gateway::Scenario& s) {
    sim::SchedulerLimits l;
    l.latency_min = s.latency_min;
    l.latency_max = s.latency_max;
    return l;
  }

  sim::SchedulerFaults faults() {
    sim::SchedulerFaults f;
    f.pause = scenario_.pause;
    f.pause_min = scenario_.pause_min;
    f.pause_max = scenario_.pause_max;
    f.crash = scenario_.crash;
    f.on_crash = [this](int, const std::string&) {
      const Micros downtime = scheduler_.choices().between(scenario_.restart_min, scenario_.restart_max);
      down_until_ = scheduler_.now() + downtime;
      scheduler_.record(sim::EventKind::kFault,
                        fmt::format("the process is down; it restarts in {}", format_duration(downtime)));
    };
    return f;
  }

  bool down() const { return scheduler_.now() < down_until_; }

  env::TaskServices services(std::function<void(const Reply&)> respond = {}) {
    return env::TaskServices{scheduler_, locks_, connections_, gateway_, std::move(respond), pg_run_.get()};
  }

  int deliver(gateway::Gateway::Delivery d) {
    auto reply = std::make_shared<std::optional<Reply>>();
    auto sent = std::make_shared<bool>(false);  // answered early with respond_now()
    auto on_reply = std::make_shared<std::function<void(std::optional<Reply>)>>(std::move(d.on_reply));
    const bool invalid = d.kind == gateway::DeliveryKind::kInvalid;
    const std::string reason = d.invalid_reason;
    const Notify notify = d.notify;
    const int id = scheduler_.spawn(
        d.task_name, d.at,
        [this, notify, reply, sent, on_reply, invalid, reason] {
          if (down()) {
            scheduler_.record(sim::EventKind::kTask, "connection refused: the process is down");
            return;  // no answer: the gateway times out
          }
          env::TaskEnv env(services([this, sent, on_reply](const Reply& r) {
            *sent = true;
            early_reply_ = true;  // the handler answers while its own work goes on
            (*on_reply)(r);
            early_reply_ = false;
          }));
          Reply r;
          try {
            r = handler_.handle(notify, env);
          } catch (const sim::TaskKilled&) {
            throw;
          } catch (const std::exception& e) {
            scheduler_.record(sim::EventKind::kTask, fmt::format("handler threw: {}", e.what()));
            r = Reply{500, "Internal Server Error"};
          } catch (...) {
            scheduler_.record(sim::EventKind::kTask, "handler threw a non-standard exception");
            r = Reply{500, "Internal Server Error"};
          }
          if (scheduler_.killed()) {
            // The process died under it: no reply leaves a dead process. Say
            // what is lost; an open transaction's writes are listed as the
            // connection closes.
            if (!env.in_transaction())
              scheduler_.record(sim::EventKind::kTask, "no transaction was open: what it wrote before is committed");
          } else {
            if (env.in_transaction())
              scheduler_.record(sim::EventKind::kTask, "returns with a transaction open: it is rolled back");
            if (!*sent) scheduler_.record(sim::EventKind::kTask, "replies " + describe_reply(r));
          }
          *reply = r;
          if (invalid && env.committed_writes())
            observed_.push_back({"accepted_invalid", notify.out_trade_no,
                                 fmt::format("{} ({}) was invalid: {}; yet it committed changes",
                                             sim::task_label(scheduler_.current()), notify.event_id, reason)});
        },
        [this, reply, sent, on_reply, notify, kind = d.kind](bool killed) {
          if (!*sent) (*on_reply)(killed ? std::nullopt : *reply);
          maybe_redeliver(notify, kind);
        });
    result_.tasks[id] = TaskInfo{d.task_name, notify.out_trade_no};
    return id;
  }

  // At-least-once delivery between the endpoint and its consumer: the queue
  // may hand the same message to the handler again, whatever the first did.
  void maybe_redeliver(const Notify& notify, gateway::DeliveryKind kind) {
    if (kind == gateway::DeliveryKind::kInvalid || kind == gateway::DeliveryKind::kQueueRedelivery) return;
    sim::Choices& c = scheduler_.choices();
    if (!c.chance(scenario_.mq_redelivery)) return;
    const Micros after = c.between(scenario_.mq_delay_min, scenario_.mq_delay_max);
    const int id = deliver(gateway::Gateway::Delivery{notify, fmt::format("queue redelivers {}", notify.event_id),
                                                      scheduler_.now() + after,
                                                      gateway::DeliveryKind::kQueueRedelivery, {},
                                                      [](std::optional<Reply>) {}});
    scheduler_.record(sim::EventKind::kFault, fmt::format("the message queue redelivers {} as {} in {}", notify.event_id,
                                                          sim::task_label(id), format_duration(after)));
  }

  // At a payment's first ack: is its credit (or refund flag) committed yet?
  // If not, that is ack_before_commit only when the ack came early (the
  // handler answered before its own work was done) or the credit is committed
  // later; an ack for a payment that is never kept is lost_payment's finding.
  void check_ack(std::size_t payment) {
    const auto& p = gateway_.payments()[payment];
    if (acked_checked_.count(payment)) return;
    acked_checked_.insert(payment);
    if (!check::settled_in_database(checker_conn_, handler_.schema(), p.order.order_no))
      early_acks_.push_back({p.order.order_no, scheduler_.now(), early_reply_});
  }

  void confirm_early_acks() {
    for (const auto& a : early_acks_) {
      if (!a.while_working && !check::settled_in_database(checker_conn_, handler_.schema(), a.order_no)) continue;
      observed_.push_back({"ack_before_commit", a.order_no,
                           fmt::format("the gateway got an ack for {} at {} while no credit for it was committed",
                                       a.order_no, format_time(a.at))});
    }
  }

  void start_jobs() {
    if (scenario_.reconciler) schedule_job("reconciler", 30 * kMinute);
    if (scenario_.close_after > 0) schedule_job("order-closer", scenario_.close_after);
  }

  void schedule_job(const std::string& name, Micros age) {
    const JobInfo* info = JobRegistry::instance().find(name);
    if (!info) throw std::runtime_error("no job registered as " + name);
    jobs_.push_back(info->make(age));
    Job* job = jobs_.back().get();
    schedule_tick(name, job, job->interval());
  }

  // A job ticks while the gateway still works on a notification, and for a
  // while after the last payment (long enough for the reconciler's 30 minutes
  // and the closer's close_after), so that a run ends when nothing can change.
  void schedule_tick(const std::string& name, Job* job, Micros at) {
    scheduler_.at(at, [this, name, job] {
      if (!down()) {
        const int id = scheduler_.spawn(name, scheduler_.now(), [this, job] {
          env::TaskEnv env(services());
          job->run(env, handler_);
        });
        result_.tasks[id] = TaskInfo{name, ""};
      }
      if (scheduler_.now() < horizon() || !gateway_.idle())
        schedule_tick(name, job, scheduler_.now() + job->interval());
    });
  }

  Micros horizon() const {
    Micros last = 0;
    for (const auto& o : scenario_.orders) last = std::max({last, o.paid_at + o.refund_after, o.closed_at});
    return last + std::max(2 * kHour, scenario_.close_after + 30 * kMinute);
  }

  const gateway::Scenario& scenario_;
  RunResult& result_;
  engine::RawConnection& checker_conn_;
  Handler& handler_;
  env::ConnectionPool connections_;  // outlives the scheduler: tasks return their connections to it
  std::unique_ptr<engine::PgRun> pg_run_;  // PostgreSQL runs only; outlives the scheduler too
  sim::Scheduler scheduler_;
  env::LockService locks_;
  gateway::Gateway gateway_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::vector<check::Violation> observed_;
  std::set<std::size_t> acked_checked_;
  struct EarlyAck {
    std::string order_no;
    Micros at;
    bool while_working;  // answered with respond_now(), before the handler returned
  };
  std::vector<EarlyAck> early_acks_;
  bool early_reply_ = false;
  Micros down_until_ = -1;
};

// The same run with its database on PostgreSQL: a database leased from the
// cluster for the run, reset to the seeded state in place.
void simulate_on_postgres(const RunSpec& spec, RunResult& result, sim::Choices& choices, Handler& handler) {
  engine::PgCluster* cluster = spec.engine.postgres;
  if (!cluster) throw std::invalid_argument("a PostgreSQL run needs RunSpec::engine.postgres");
  const Schema& schema = handler.schema();
  if (schema.postgres_setup_sql.empty())
    throw std::runtime_error(fmt::format("handler {} has no PostgreSQL schema (Schema::postgres_setup_sql)",
                                         spec.handler->name));
  std::unique_ptr<engine::PgDatabase> database;
  if (Status s = cluster->lease(database); !s.ok()) throw std::runtime_error(s.message());
  struct GiveBack {
    engine::PgCluster* cluster;
    std::unique_ptr<engine::PgDatabase>& db;
    ~GiveBack() {
      if (db) cluster->give_back(std::move(db));
    }
  } give_back{cluster, database};
  Status s = database->set_isolation(spec.engine.isolation);
  if (s.ok())
    s = database->prepare(seed_key(*spec.scenario, schema, Engine::kPostgres), schema.postgres_setup_sql,
                          seed_statements(*spec.scenario, schema));
  if (!s.ok()) throw std::runtime_error(s.message());
  Run run(spec, result, choices, database->checker(), handler, {}, database.get());
  run.run();
}

}  // namespace

RunResult simulate(const RunSpec& spec) {
  const gateway::Scenario& scenario = *spec.scenario;
  if (!gateway::find_profile(scenario.profile)) throw std::invalid_argument("unknown gateway profile " + scenario.profile);

  RunResult result;
  result.seed = spec.seed;
  result.trace.set_recording(spec.record_trace);
  sim::Choices choices = spec.choices ? sim::Choices(*spec.choices) : sim::Choices(spec.seed);

  std::unique_ptr<Handler> handler = spec.handler->make();
  if (spec.engine.engine == Engine::kPostgres) {
    simulate_on_postgres(spec, result, choices, *handler);
    result.choices = choices.consumed();
    return result;
  }
  const std::string db_name = env::fresh_database_path();
  env::create_seeded_database(db_name, seed_key(scenario, handler->schema()),
                              [&](sqlite3* conn) { seed_database(conn, scenario, handler->schema()); });
  sqlite3* checker_conn = env::open_database(db_name);
  try {
    engine::SqliteRawConnection checker(checker_conn);
    Run run(spec, result, choices, checker, *handler, db_name);
    run.run();
  } catch (...) {
    sqlite3_close(checker_conn);
    env::remove_database(db_name);
    throw;
  }
  sqlite3_close(checker_conn);
  env::remove_database(db_name);
  result.choices = choices.consumed();
  return result;
}

}  // namespace twice::run
