// MariadbCluster: the MariaDB side of one twice process. One server per
// process: the throwaway MariadbServer started on first use, or the one an
// --engine-url mysql://... names. Runs lease a database each
// (twice_<pid>_<n>), so runs on several threads never share tables; a
// database keeps its connections and its schema from one run to the next.
// Thread-safe: lease() and give_back() may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/database_pool.h"
#include "engine/mariadb_database.h"
#include "engine/mariadb_server.h"

namespace twice::engine {

class MariadbCluster {
 public:
  // `url` empty: start a throwaway server when first needed. Otherwise
  // mysql://user[:password]@host[:port][/db][?socket=/path] of a server where
  // that user may CREATE DATABASE.
  explicit MariadbCluster(std::string url = {});
  ~MariadbCluster();
  MariadbCluster(const MariadbCluster&) = delete;
  MariadbCluster& operator=(const MariadbCluster&) = delete;

  // Starts the server (once) and checks the connection. The same Status on
  // every call after a failure; on a URL's server it names the URL, without
  // its password (engine/engine_url.h), and never prints that password.
  Status ensure_started();
  // A database no other run is using, until given back.
  Status lease(std::unique_ptr<MariadbDatabase>& out);
  void give_back(std::unique_ptr<MariadbDatabase> db);
  // Null when an external server is used or before the start.
  const MariadbServer* server() const { return server_.get(); }
  // The URL given (with its password, if any); empty for twice's own server.
  const std::string& url() const { return url_; }
  // "10.11.6-MariaDB-0+deb12u1": the server's version (empty before the start).
  const std::string& version() const { return version_; }
  // The server's settings a verdict is known to depend on, as it has them:
  // innodb_snapshot_isolation (where the server has it), which makes a
  // REPEATABLE READ write to a row changed since the snapshot error 1020.
  const std::vector<std::pair<std::string, std::string>>& settings() const { return settings_; }

 private:
  Status check_rights();
  std::mutex mutex_;
  std::string url_;
  bool tried_ = false;
  Status started_;
  MariadbAddress address_;
  std::string version_;
  std::vector<std::pair<std::string, std::string>> settings_;
  std::unique_ptr<MariadbServer> server_;
  std::unique_ptr<MariadbConnection> admin_;
  DatabasePool<MariadbDatabase> databases_;
};

}  // namespace twice::engine
