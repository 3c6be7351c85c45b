#include "run/simulate.h"

#include <new>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "check/invariants/during_run.h"
#include "endpoint/endpoint.h"
#include "engine/mariadb_cluster.h"
#include "engine/mariadb_db.h"
#include "engine/pg_cluster.h"
#include "engine/pg_db.h"
#include "env/lock_service.h"
#include "env/run_database.h"
#include "env/seed.h"
#include "env/seeded_database.h"
#include "env/sqlite_db.h"
#include "fault/fault_plan.h"
#include "gateway/gateway.h"
#include "gateway/scenario_profile.h"
#include "net/network.h"
#include "services/services.h"
#include "sim/scheduler.h"
#include "twice/job.h"

namespace twice::run {

bool RunResult::has(std::string_view invariant) const {
  for (const auto& v : verdict.violations)
    if (v.invariant == invariant) return true;
  return false;
}

namespace {

// The database the run starts from, seeded from the scenario's orders.
void seed_database(sqlite3* conn, const gateway::Scenario& scenario, const Schema& schema) {
  std::vector<env::SeedOrder> orders;
  for (const auto& o : scenario.orders) orders.push_back({o.order_no, o.user, o.amount, o.currency});
  if (Status s = env::seed_database(conn, schema, orders); !s.ok()) throw std::runtime_error(s.message());
}

// The rows a server engine's run starts from, as statements: every order
// waiting for payment, every user's account at zero.
std::vector<engine::PgDatabase::Statement> seed_statements(const gateway::Scenario& scenario, const Schema& schema) {
  std::vector<engine::PgDatabase::Statement> out;
  std::set<std::string> users;
  for (const auto& o : scenario.orders) {
    out.push_back({schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}});
    if (users.insert(o.user).second) out.push_back({schema.insert_account_sql, {o.user}});
  }
  return out;
}

// Everything seed_database() reads: runs with equal keys start from equal databases.
// Appended by hand into one buffer per thread, valid until the thread's next
// call: fmt::format here cost 2% of a short run, and a new string of the
// setup SQL's kilobytes every run was an allocation past malloc's caches.
const std::string& seed_key(const gateway::Scenario& scenario, const Schema& schema, Engine engine = Engine::kSqlite) {
  thread_local std::string key;
  key.clear();
  auto add = [](std::string_view field) {
    key += std::to_string(field.size());
    key += ':';
    key += field;
    key += ';';
  };
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

fault::FaultRates fault_rates(const gateway::Scenario& s) {
  fault::FaultRates r;
  r.request_loss = s.request_loss;
  r.duplicate = s.duplicate;
  r.max_copies = s.max_copies;
  r.delay_min = s.delay_min;
  r.delay_max = s.delay_max;
  r.duplicate_delay_min = s.duplicate_delay_min;
  r.duplicate_delay_max = s.duplicate_delay_max;
  r.ack_loss = s.ack_loss;
  r.queue_redelivery = s.mq_redelivery;
  r.queue_delay_min = s.mq_delay_min;
  r.queue_delay_max = s.mq_delay_max;
  r.pause = s.pause;
  r.pause_min = s.pause_min;
  r.pause_max = s.pause_max;
  r.crash = s.crash;
  r.restart_min = s.restart_min;
  r.restart_max = s.restart_max;
  r.second_signal = s.second_signal;
  r.second_signal_delay_min = s.second_signal_delay_min;
  r.second_signal_delay_max = s.second_signal_delay_max;
  r.services = services::fault_rates(gateway::services_of(s));
  return r;
}

sim::SchedulerLimits limits(const gateway::Scenario& s) {
  sim::SchedulerLimits l;
  l.latency_min = s.latency_min;
  l.latency_max = s.latency_max;
  return l;
}

// One run, wired: gateway -> network -> endpoint -> handler, and the reply
// back endpoint -> network -> gateway, whose acks the checker observes.
// Everything here is a value passed along; nothing calls back into the run
// but the endpoint's replies (ReplySink).
class Simulation final : public endpoint::ReplySink {
 public:
  // `checker` reads the run's database for the checker; `postgres` or
  // `mariadb`, when set, is the run's database on that server (tasks then
  // open their Db there).
  Simulation(const RunSpec& spec, RunResult& result, sim::Choices& choices, env::RawConnection& checker, Handler& handler,
      env::ConnectionPool& connections, engine::PgDatabase* postgres = nullptr,
      engine::MariadbDatabase* mariadb = nullptr)
      : scenario_(*spec.scenario),
        result_(result),
        checker_db_(checker),
        handler_(handler),
        connections_(connections),
        // The run keeps a reference to scheduler_, constructed next; it uses it only once tasks run.
        server_run_(postgres  ? std::unique_ptr<engine::ServerRun>(std::make_unique<engine::PgRun>(scheduler_, *postgres))
                    : mariadb ? std::make_unique<engine::MariadbRun>(scheduler_, *mariadb)
                              : nullptr),
        scheduler_(spec.strategy, choices, result.trace, limits(scenario_)),
        faults_(fault_rates(scenario_), scheduler_),
        services_(gateway::services_of(scenario_), scheduler_, faults_),
        locks_(scheduler_),
        network_(scheduler_, faults_, endpoint_),
        gateway_(scenario_, *gateway::played_profile(scenario_, own_profile_), scheduler_, network_, faults_),
        endpoint_(scheduler_, handler_, endpoint::Backends{connections_, locks_, gateway_, server_run_.get(), &services_},
                  faults_,
                  *this),
        acks_(checker_db_, handler_.schema()) {
    scheduler_.set_process_faults(&endpoint_);
  }
  // A run that threw may leave tasks parked mid-delivery: they unwind here,
  // while the endpoint, gateway, locks and jobs their frames use still exist
  // (members go in reverse order, and the scheduler is older than they are).
  ~Simulation() override { scheduler_.unwind_parked_tasks(); }

  void run() {
    gateway_.start();
    start_jobs();
    scheduler_.run();
    std::vector<check::Violation> observed;
    accepted_invalid_.judge(observed);
    acks_.judge(observed);
    for (const auto& [job, failed] : failed_jobs_)
      observed.emplace_back(check::Invariant::kJobFailed, job,
                            fmt::format("the {} job failed on {} of its {} tick{}, first on {}; it cannot work with "
                                        "this handler's tables, so this scenario says nothing about the handler with it",
                                        job, failed.ticks, ticks_[job], ticks_[job] == 1 ? "" : "s", failed.first));
    result_.steps = scheduler_.steps();
    result_.choice_points = scheduler_.choice_points();
    result_.interleaving = scheduler_.interleaving();
    result_.end_time = scheduler_.now();
    result_.tasks = endpoint_.take_tasks();
    result_.effects = services_.applied();
    check::CheckOptions options;
    options.payload_required = scenario_.payload_required;
    options.required_effects = scenario_.required_effects;
    options.effects = &services_.applied();
    result_.verdict =
        check::judge(checker_db_, handler_.schema(), gateway_.payments(), scheduler_.stuck(), observed, options);
  }

  // endpoint::ReplySink: a reply travels back over the network; the gateway
  // judges it by its protocol; the checker looks at each ack.
  void replied(const endpoint::Delivery& delivery, std::optional<Reply> reply, bool early) override {
    if (delivery.request == endpoint::kNoRequest) return;  // a copy: answered into the void
    if (!reply) return;  // no answer left the process: the gateway times out
    if (!network_.reply_arrives([&] { return gateway_.describe(delivery.request); })) return;
    if (const std::optional<std::size_t> payment = gateway_.receive(delivery.request, *reply))
      acks_.acked(*payment, gateway_.payments()[*payment].order.order_no, scheduler_.now(), early);
  }

  // endpoint::ReplySink: the checker watches an invalid delivery's commits.
  std::unique_ptr<env::CommitWatch> watch_invalid(const endpoint::Delivery& delivery, int task) override {
    return accepted_invalid_.watch(checker_db_, handler_.schema(), gateway_.payments(),
                                   check::AcceptedInvalid::Delivery{delivery.notify.out_trade_no, sim::task_label(task),
                                                                    delivery.notify.event_id, delivery.invalid_reason});
  }

 private:
  void start_jobs() {
    if (scenario_.reconciler) schedule_job("reconciler", 30 * kMinute);
    if (scenario_.close_after > 0) schedule_job("order-closer", scenario_.close_after);
    for (const auto& name : handler_.jobs()) schedule_job(name, 0);  // the handler's own (an outbox relay)
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
  // Past that, a tick the process missed (down) or did not finish (a crash)
  // is run again, as the restarted process would, up to a day of ticks: else
  // a reconciler that crashed at every tick until the horizon lost a payment
  // the next tick would have found (1 run in 500 of crash-mid-handler).
  static constexpr int kTicksAfterTheHorizon = 144;

  void schedule_tick(const std::string& name, Job* job, Micros at, int retries = kTicksAfterTheHorizon) {
    scheduler_.at(at, [this, name, job, retries] {
      const bool more = scheduler_.now() < horizon() || !gateway_.idle();
      const Micros next = scheduler_.now() + job->interval();
      if (const std::optional<int> task = endpoint_.run_job(name, *job)) {
        ++ticks_[name];
        if (!more && retries > 0) retry_if_killed_[*task] = Tick{name, job, next, retries - 1};
      } else if (!more && retries > 0) {
        schedule_tick(name, job, next, retries - 1);
      }
      if (more) schedule_tick(name, job, next);
    });
  }

  // endpoint::ReplySink: a job's task ended; a tick past the horizon that a
  // crash killed runs again.
  void job_ended(int task, bool killed) override {
    const auto it = retry_if_killed_.find(task);
    if (it == retry_if_killed_.end()) return;
    const Tick tick = it->second;
    retry_if_killed_.erase(it);
    if (killed) schedule_tick(tick.name, tick.job, tick.at, tick.retries);
  }

  // endpoint::ReplySink: a tick of `job` had a statement of its own refused.
  void job_failed(const std::string& job, const std::string& why) override {
    FailedJob& failed = failed_jobs_[job];
    if (failed.ticks++ == 0) failed.first = why;
  }

  Micros horizon() const {
    Micros last = 0;
    for (const auto& o : scenario_.orders) last = std::max({last, o.paid_at + o.refund_after, o.closed_at});
    return last + std::max(2 * kHour, scenario_.close_after + 30 * kMinute);
  }

  const gateway::Scenario& scenario_;
  RunResult& result_;
  env::RawConnection& checker_db_;
  Handler& handler_;
  env::ConnectionPool& connections_;  // outlives the scheduler: tasks return their connections to it
  std::unique_ptr<engine::ServerRun> server_run_;  // server engines' runs only; outlives the scheduler too
  sim::Scheduler scheduler_;
  fault::FaultPlan faults_;
  services::Services services_;
  env::LockService locks_;
  net::Network network_;  // carries to endpoint_, constructed below; used only once the run starts
  // The profile gateway_ plays, when the scenario's [gateway] makes it its own (else the shared entry).
  std::optional<gateway::RetryProfile> own_profile_;
  gateway::Gateway gateway_;
  endpoint::Endpoint endpoint_;
  check::AckBeforeCommit acks_;
  check::AcceptedInvalid accepted_invalid_;
  std::vector<std::unique_ptr<Job>> jobs_;
  struct Tick {
    std::string name;
    Job* job;
    Micros at;
    int retries;
  };
  std::map<int, Tick> retry_if_killed_;  // job tasks past the horizon, by task id
  struct FailedJob {
    int ticks = 0;      // ticks with a statement refused
    std::string first;  // the first refusal
  };
  std::map<std::string, FailedJob> failed_jobs_;  // by job name
  std::map<std::string, int> ticks_;               // ticks started, by job name
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
  {
    env::ConnectionPool unused({});  // tasks open their Db on PostgreSQL
    Simulation run(spec, result, choices, database->checker(), handler, unused, database.get());
    run.run();
  }
  // Judged, and every task's session gone: the next run's reset overlaps
  // what twice does before it.
  database->reset_ahead();
}

// The same run with its database on MariaDB: a database leased from the
// cluster for the run, reset to the seeded state in place.
void simulate_on_mariadb(const RunSpec& spec, RunResult& result, sim::Choices& choices, Handler& handler) {
  engine::MariadbCluster* cluster = spec.engine.mariadb;
  if (!cluster) throw std::invalid_argument("a MariaDB run needs RunSpec::engine.mariadb");
  const Schema& schema = handler.schema();
  if (schema.mariadb_setup_sql.empty())
    throw std::runtime_error(fmt::format("handler {} has no MariaDB schema (Schema::mariadb_setup_sql)",
                                         spec.handler->name));
  std::unique_ptr<engine::MariadbDatabase> database;
  if (Status s = cluster->lease(database); !s.ok()) throw std::runtime_error(s.message());
  struct GiveBack {
    engine::MariadbCluster* cluster;
    std::unique_ptr<engine::MariadbDatabase>& db;
    ~GiveBack() {
      if (db) cluster->give_back(std::move(db));
    }
  } give_back{cluster, database};
  Status s = database->set_isolation(spec.engine.isolation);
  if (s.ok())
    s = database->prepare(seed_key(*spec.scenario, schema, Engine::kMariadb), schema.mariadb_setup_sql,
                          seed_statements(*spec.scenario, schema));
  if (!s.ok()) throw std::runtime_error(s.message());
  env::ConnectionPool unused({});  // tasks open their Db on MariaDB
  Simulation run(spec, result, choices, database->checker(), handler, unused, nullptr, database.get());
  run.run();
}

// The run, throwing where it cannot start or go on (a schema the database
// refuses, an unknown profile, a server that is gone); simulate() turns that
// into its error Status, so no exception leaves this module.
RunResult simulate_or_throw(const RunSpec& spec) {
  const gateway::Scenario& scenario = *spec.scenario;
  if (!gateway::find_profile(scenario.profile)) throw std::invalid_argument("unknown gateway profile " + scenario.profile);

  RunResult result;
  result.seed = spec.seed;
  // A named script matches its steps against the operations' traced text.
  result.trace.set_recording(spec.record_trace || !spec.strategy.steps.empty());
  result.trace.set_listener(spec.on_event);
  sim::Choices choices = spec.guide ? sim::Choices(sim::Choices::Exhaustive{}, *spec.guide)
                         : spec.strategy.kind == sim::StrategyKind::kExhaustive
                             ? sim::Choices(sim::Choices::Exhaustive{}, spec.choices.value_or(std::vector<std::uint64_t>{}))
                         : spec.choices ? sim::Choices(*spec.choices)
                                        : sim::Choices(spec.seed);

  std::unique_ptr<Handler> handler = spec.handler->make();
  if (spec.engine.engine == Engine::kPostgres) {
    simulate_on_postgres(spec, result, choices, *handler);
    result.choices = choices.consumed();
    return result;
  }
  if (spec.engine.engine == Engine::kMariadb) {
    simulate_on_mariadb(spec, result, choices, *handler);
    result.choices = choices.consumed();
    return result;
  }
  // The thread's database, reset in place; or, when asked, one of the run's own.
  std::optional<env::RunDatabase> own;
  env::RunDatabase& database = spec.fresh_connections ? own.emplace() : env::RunDatabase::of_this_thread();
  database.reset(seed_key(scenario, handler->schema()),
                 [&](sqlite3* conn) { seed_database(conn, scenario, handler->schema()); });
  try {
    Simulation run(spec, result, choices, database.checker(), *handler, database.connections());
    run.run();
  } catch (...) {
    database.discard();  // a run cut short may leave a connection mid-statement
    throw;
  }
  result.choices = choices.consumed();
  return result;
}

}  // namespace

StatusOr<RunResult> simulate(const RunSpec& spec) {
  try {
    return simulate_or_throw(spec);
  } catch (const std::bad_alloc&) {
    throw;  // out of memory is the process's, not the run's: a cell under --cell-memory says so
  } catch (const std::exception& e) {
    return Status::error(e.what());
  }
}

}  // namespace twice::run
