// MariadbServer: a throwaway MariaDB server for one twice process.
//
// start() runs Debian's `mariadb-install-db` into a fresh folder (under
// /dev/shm when there is one: InnoDB's TRUNCATE, the per-run reset, costs a
// quarter of what it costs on disk) and starts `mariadbd --no-defaults
// --skip-networking` with its socket in that folder: no TCP, no option file
// of the machine's, nothing durable. The destructor stops it (SIGTERM, a
// normal shutdown) and removes the folder; a Guardian does the same if this
// process dies without running destructors. Create and destroy from one
// thread; socket() is safe from any thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "engine/child_process.h"
#include "twice/status.h"

namespace twice::engine {

class MariadbServer {
 public:
  // Starts a server. On failure `out` stays empty, nothing is left behind,
  // and the Status is one line: "cannot start MariaDB: mariadbd not found;
  // install the mariadb-server package (scripts/setup.sh)".
  static Status start(std::unique_ptr<MariadbServer>& out);
  ~MariadbServer();
  MariadbServer(const MariadbServer&) = delete;
  MariadbServer& operator=(const MariadbServer&) = delete;

  // The Unix socket clients connect to, as root (no password).
  const std::string& socket() const { return socket_; }
  const std::string& folder() const { return folder_; }
  pid_t pid() const { return pid_; }
  // Wall-clock seconds mariadb-install-db and the server's start took.
  double install_seconds() const { return install_seconds_; }
  double start_seconds() const { return start_seconds_; }

 private:
  MariadbServer() = default;
  void stop();

  std::string folder_;  // socket `s` here, data in folder_/data, log in folder_/log
  std::string socket_;
  pid_t pid_ = -1;
  Guardian guardian_;
  double install_seconds_ = 0;
  double start_seconds_ = 0;
};

}  // namespace twice::engine
