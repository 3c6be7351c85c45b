// run_stress(): the real-thread counterpart of simulate(). Worker threads
// (std::jthread) deliver payment callbacks to one handler, unchanged, through
// RealEnv onto a SQLite database file in WAL mode, or (StressOptions::engine)
// a database on a PostgreSQL or MariaDB server, each worker on its own
// blocking connection at the run's isolation level. Deliveries go in rounds: in
// each round the workers split into groups of `duplicates`, every group takes
// the next order, and all workers wait on one std::barrier, so the copies of
// an order leave the barrier together and really race. After the last round
// the same checker as the simulator's reads the database against a gateway
// ledger built here (every order settled, acked when any copy was acked),
// through the handler's Schema, as simulate() does. Orders are seeded in
// chunks as the rounds reach them, while every worker waits at the barrier:
// memory and set-up grow with the orders run, not the orders asked for, and
// --seconds or a stop bound the seeding too. Only what the database
// shows afterwards is judged (kInvariantsJudged); the
// invariants the simulator observes while a run goes on (ack_before_commit,
// accepted_invalid) need its scheduler and are not checked here.
//
// Nothing here is replayable: there is no seed, only what the operating
// system's scheduler did; the simulator finds bugs, this shows that they occur
// with real threads and how often. Stress mode has no external services: a
// handler that calls Env::call() ends the run with an error (not a verdict),
// which names the service, at the end of the round. A SQLite database lives in a fresh mkdtemp
// folder, removed when the run ends; a server database is leased from the
// engine's cluster and given back (stress_database.h).
//
// Threads: run_stress() blocks its caller; it starts and joins its own
// workers. Several runs may go on at once, they share nothing. on_progress is
// called from a worker thread while the others wait at the barrier.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>

#include <sqlite3.h>

#include "check/checker.h"
#include "engine/engine_choice.h"
#include "gateway/scenario.h"
#include "twice/handler.h"
#include "twice/schema.h"
#include "twice/status.h"

namespace twice::stress {

class StressDatabase;

// What stress mode judges: what the database shows afterwards. The other
// invariants need the simulator's scheduler (`twice run`).
inline constexpr const char* kInvariantsJudged[] = {"double_credit", "lost_update", "lost_payment", "wrong_amount"};
// Of those, what one round's orders show on their own, judged after every
// round under --until-violation: wrong_amount weighs an account against every
// payment settled for it, and a round holds only its own (with 64 users, order
// 64 is the first on an account an earlier round credited); the judgement at
// the end, over every order, has them all.
inline constexpr const char* kInvariantsJudgedPerRound[] = {"double_credit", "lost_update", "lost_payment"};

struct StressProgress {
  long deliveries_done = 0;
  long deliveries_planned = 0;
  Micros elapsed = 0;
};

struct StressOptions {
  const HandlerInfo* handler = nullptr;
  int threads = 8;
  int duplicates = 2;    // copies of each order, lined up on the barrier; 1..threads
  long orders = 50'000;  // the run ends after this many orders ...
  Micros time_limit = 0;  // ... or when this much time has passed (0: no limit)
  // How long a statement waits for a lock before it fails: SQLite's busy
  // timeout, PostgreSQL's lock_timeout, InnoDB's lock wait timeout.
  Micros busy_timeout = 5 * kSecond;
  // A copy the handler did not acknowledge is delivered again by its worker,
  // up to this many times: the gateway's retries. Without them a handler that
  // answers 5xx on a serialization failure or a deadlock, as it should, would
  // show lost_payment for an order the gateway will deliver again. Like a
  // gateway, the worker backs off first: a random delay (seeded per worker)
  // in [d/2, d], d doubling from redelivery_backoff up to redelivery_backoff_max.
  int redeliveries = 3;
  Micros redelivery_backoff = kMillisecond;
  Micros redelivery_backoff_max = 32 * kMillisecond;
  // Where the tables live: SQLite (default), or a server engine and level
  // with its cluster (which must outlive the run).
  engine::EngineChoice engine = {};
  // Run the checker after every round and stop at the first violation: how
  // long a bug takes to show. Costs a pass over the ledger per round.
  bool stop_at_first_violation = false;
  std::string temp_parent;  // where the mkdtemp folder goes; empty: the system's temp directory
  // A database opened already (open_stress_database), e.g. leased from a
  // server before a fork; null: run_stress() opens one on `engine`. The caller
  // keeps ownership; the run seeds it (a fresh one, never seeded before).
  StressDatabase* database = nullptr;
  const std::atomic<bool>* stop = nullptr;  // set (e.g. on SIGINT) to end after the current round
  std::function<void(const StressProgress&)> on_progress;  // at most every 200 ms
};

struct StressReport {
  std::string handler;
  std::string database;  // "SQLite WAL file", "PostgreSQL read-committed", ...
  int threads = 0;     // workers that delivered (groups × duplicates)
  int duplicates = 0;
  long orders_planned = 0;
  long orders_run = 0;      // orders whose every copy was delivered
  long deliveries = 0;      // orders_run × duplicates
  long acked = 0;           // deliveries the gateway would count as acknowledged (WeChat v3)
  long redeliveries = 0;    // copies sent again because they were not acknowledged
  Micros elapsed = 0;       // from the first round's release to the last worker's return
  Micros seeding = 0;       // of `elapsed`, the time spent seeding orders between rounds
  std::string stopped_by;   // "", "time limit", "first violation", "interrupted"

  check::Verdict verdict;
  std::map<std::string, int> violations_per_invariant;
  long violating_orders = 0;  // distinct orders named by some violation
  // Processes the handler forked and left running, killed when the run ended
  // (run_stress_contained(); run_stress() itself leaves them be).
  int processes_left = 0;

  // Every delivery made (redeliveries included) per second spent delivering
  // (elapsed minus seeding).
  double deliveries_per_second() const;
  double violation_rate() const;  // violating_orders / orders_run
};

// Runs the stress test. Fails (and fills nothing useful) when the options are
// out of range, the database cannot be created or seeded, or the handler
// called an external service; the Status says which.
Status run_stress(const StressOptions& options, StressReport& report);

// The workload, shared with the benchmarks' raw-SQLite floor. Order `index`
// is "S-<index>"; the orders of one round (`groups` at a time) belong to one
// user (of 64, in turn), so concurrent top-ups of one account happen as well.
gateway::OrderSpec stress_order(long index, int groups);
Notify stress_notify(const gateway::OrderSpec& order);
// Creates `schema`'s tables and seeds `orders` orders (waiting for payment)
// and their users' accounts, in one transaction.
Status seed_stress_database(sqlite3* conn, const Schema& schema, long orders, int groups);

}  // namespace twice::stress
