#include "run/simulate.h"

#include <atomic>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <unistd.h>

#include "env/lock_service.h"
#include "env/sqlite_db.h"
#include "env/task_env.h"
#include "gateway/gateway.h"
#include "sim/scheduler.h"

namespace twice::run {

bool RunResult::has(std::string_view invariant) const {
  for (const auto& v : verdict.violations)
    if (v.invariant == invariant) return true;
  return false;
}

namespace {

std::string fresh_database_name() {
  static std::atomic<std::uint64_t> counter{0};
  return fmt::format("twice-{}-{}", ::getpid(), counter++);
}

// The database the run starts from: the handler's schema, every order
// waiting for payment, every user's account at zero.
void seed_database(sqlite3* conn, const gateway::Scenario& scenario, const Schema& schema) {
  if (auto err = env::exec_script(conn, schema.setup_sql); !err.empty())
    throw std::runtime_error("the handler's schema: " + err);
  std::set<std::string> users;
  for (const auto& o : scenario.orders) {
    if (auto r = env::query(conn, schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency}); !r.ok())
      throw std::runtime_error("seeding order " + o.order_no + ": " + r.status.to_string());
    if (users.insert(o.user).second) {
      if (auto r = env::query(conn, schema.insert_account_sql, {o.user}); !r.ok())
        throw std::runtime_error("seeding account " + o.user + ": " + r.status.to_string());
    }
  }
}

std::string describe_reply(const Reply& r) {
  std::string body = r.body.size() > 60 ? r.body.substr(0, 57) + "..." : r.body;
  return fmt::format("HTTP {} {}", r.http_status, body);
}

}  // namespace

RunResult simulate(const RunSpec& spec) {
  const gateway::Scenario& scenario = *spec.scenario;
  const gateway::RetryProfile* profile = gateway::find_profile(scenario.profile);
  if (!profile) throw std::invalid_argument("unknown gateway profile " + scenario.profile);

  RunResult result;
  result.seed = spec.seed;
  sim::Choices choices = spec.choices ? sim::Choices(*spec.choices) : sim::Choices(spec.seed);

  const std::string db_name = fresh_database_name();
  sqlite3* checker_conn = env::open_memdb(db_name);  // also keeps the database alive for the run
  std::unique_ptr<Handler> handler = spec.handler->make();
  const Schema& schema = handler->schema();
  try {
    seed_database(checker_conn, scenario, schema);
  } catch (...) {
    sqlite3_close(checker_conn);
    throw;
  }

  {
    sim::SchedulerLimits limits;
    limits.latency_min = scenario.latency_min;
    limits.latency_max = scenario.latency_max;
    sim::Scheduler scheduler(spec.strategy, choices, result.trace, limits);
    env::LockService lock_service(scheduler);

    auto deliver = [&](const Notify& notify, std::string name, Micros at,
                       std::function<void(std::optional<Reply>)> on_reply) {
      auto reply = std::make_shared<std::optional<Reply>>();
      const int id = scheduler.spawn(
          name, at,
          [&scheduler, &lock_service, &db_name, &handler, notify, reply] {
            env::TaskEnv env(scheduler, lock_service, db_name);
            Reply r;
            try {
              r = handler->handle(notify, env);
            } catch (const sim::TaskKilled&) {
              throw;
            } catch (const std::exception& e) {
              scheduler.record(sim::EventKind::kTask, fmt::format("handler threw: {}", e.what()));
              r = Reply{500, "Internal Server Error"};
            } catch (...) {
              scheduler.record(sim::EventKind::kTask, "handler threw a non-standard exception");
              r = Reply{500, "Internal Server Error"};
            }
            if (env.in_transaction())
              scheduler.record(sim::EventKind::kTask, "returns with a transaction open: it is rolled back");
            scheduler.record(sim::EventKind::kTask, "replies " + describe_reply(r));
            *reply = r;
          },
          [reply, on_reply](bool killed) { on_reply(killed ? std::nullopt : *reply); });
      result.tasks[id] = TaskInfo{std::move(name), notify.out_trade_no};
      return id;
    };

    gateway::Gateway gw(scenario, *profile, scheduler, deliver);
    gw.start();
    scheduler.run();

    result.steps = scheduler.steps();
    result.end_time = scheduler.now();
    result.verdict = check::check_run(checker_conn, schema, gw.payments(), scheduler.stuck());
  }
  sqlite3_close(checker_conn);
  result.choices = choices.consumed();
  return result;
}

}  // namespace twice::run
