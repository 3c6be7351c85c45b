// StressDatabase: where one stress run's tables live, on the engine the run
// names: a SQLite file in WAL mode in a fresh mkdtemp folder (the default),
// or a database leased from the PostgreSQL or MariaDB cluster of the process
// (engine/pg_cluster.h, engine/mariadb_cluster.h), at the run's isolation
// level. It seeds the handler's schema, opens one WorkerDb per worker thread
// and lends the checker a RawConnection, the same oracle queries on every
// engine. When it goes, everything goes with it: the SQLite folder is
// removed; a server database is given back to its cluster.
//
// Threads: open_worker() may be called from the runner's thread only (the
// runner opens every connection before the first round); checker() is used
// while every worker waits at the barrier or after they are joined.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "engine/engine_choice.h"
#include "env/raw_connection.h"
#include "stress/worker_db.h"
#include "twice/time.h"
#include "twice/schema.h"
#include "twice/status.h"

namespace twice::stress {

struct StressOrder {
  std::string order_no;
  std::string user;
  std::int64_t amount = 0;
  std::string currency;
};

class StressDatabase {
 public:
  virtual ~StressDatabase() = default;
  // Creates `schema`'s tables (its setup SQL for this engine) and seeds every
  // order waiting for payment and each user's account at zero.
  virtual Status seed(const Schema& schema, const std::vector<StressOrder>& orders) = 0;
  // A new connection for one worker thread; its status() says whether it opened.
  virtual std::unique_ptr<WorkerDb> open_worker() = 0;
  // The connection the checker reads the database through.
  virtual env::RawConnection& checker() = 0;
  // "SQLite WAL file", "PostgreSQL read-committed": what the report names.
  virtual std::string description() const = 0;
  // Another process (a forked run) used this database's connections: what
  // state they are in is unknown here, so when this object goes they are
  // closed and the database is never lent to another run.
  virtual void discard() {}
};

// Seeds more orders into a seeded database through `conn` (the checker's
// connection, while no worker runs), in one transaction: each order, and the
// account of each user not in `users` yet (added to it). A failure names the
// order or account.
Status add_stress_orders(env::RawConnection& conn, const Schema& schema, const std::vector<StressOrder>& orders,
                         std::set<std::string>& users);

// The database of a run on `engine`. `busy_timeout` is how long a statement
// waits for a lock before it fails (SQLite's busy handler, PostgreSQL's
// lock_timeout, InnoDB's innodb_lock_wait_timeout in whole seconds).
// `temp_parent` is where SQLite's folder goes (empty: the system's temp
// directory). Fails when the folder, the server or its database cannot be had.
Status open_stress_database(const engine::EngineChoice& engine, Micros busy_timeout, const std::string& temp_parent,
                            std::unique_ptr<StressDatabase>& out);

}  // namespace twice::stress
