// PostgresServer: a throwaway PostgreSQL server for one twice process.
//
// start() runs Debian's `initdb` into a fresh folder under the temporary
// directory and starts `postgres` listening only on a Unix socket in that
// folder (no TCP), as the `postgres` user when twice runs as root. Nothing
// about it is durable (fsync off): it exists for the runs of this process.
// The destructor stops it (fast shutdown) and removes the folder; a Guardian
// process does the same if this process dies without running destructors
// (SIGKILL, a crash, a signal's default action). Create and destroy from one
// thread; conninfo() is safe from any thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "engine/child_process.h"
#include "twice/status.h"

namespace twice::engine {

class PostgresServer {
 public:
  // Starts a server. On failure `out` stays empty, nothing is left behind,
  // and the Status is one line: "cannot start PostgreSQL: initdb not found;
  // install the postgresql package (scripts/setup.sh)".
  static Status start(std::unique_ptr<PostgresServer>& out);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // A libpq connection string for database `dbname` as the superuser.
  std::string conninfo(const std::string& dbname) const;
  const std::string& folder() const { return folder_; }
  pid_t pid() const { return pid_; }
  // Wall-clock seconds initdb and the server's start took (for the docs' figures).
  double initdb_seconds() const { return initdb_seconds_; }
  double start_seconds() const { return start_seconds_; }

 private:
  PostgresServer() = default;
  void stop();

  std::string folder_;  // socket here, data in folder_/data, log in folder_/log
  pid_t pid_ = -1;
  Guardian guardian_;
  double initdb_seconds_ = 0;
  double start_seconds_ = 0;
};

}  // namespace twice::engine
