// WorkerDb: the Db one stress worker thread owns, on whichever engine: a
// SQLite connection onto the WAL file (RealDb, real_env.h) or a blocking
// connection to a PostgreSQL or MariaDB server (server_worker_db.h). What
// the stress runner needs beyond Db: whether the connection opened, and
// whether a handler left a transaction open (the runner rolls it back before
// the connection serves the next delivery, as a pool would).
// Threads: one worker's; never shared.
#pragma once

#include <utility>

#include "twice/db.h"

namespace twice::stress {

class WorkerDb : public Db {
 public:
  // OK once connected; else why not (then every exec() answers that error).
  virtual const Status& status() const = 0;
  // A transaction is open on the connection.
  virtual bool in_transaction() const = 0;
};

// The Result of a statement that did not run, for `status`'s reason.
inline Result failed(Status status) {
  Result r;
  r.status = std::move(status);
  return r;
}

}  // namespace twice::stress
