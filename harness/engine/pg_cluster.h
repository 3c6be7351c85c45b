// PgCluster: the PostgreSQL side of one twice process. One server per
// process: the throwaway PostgresServer started on first use, or the one an
// --engine-url names. Runs lease a database each (twice_<pid>_<n>), so runs
// on several threads never share tables; a database keeps its connections and
// its schema from one run to the next.
// Thread-safe: lease() and give_back() may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/database_pool.h"
#include "engine/pg_database.h"
#include "engine/postgres_server.h"

namespace twice::engine {

class PgCluster {
 public:
  // `url` empty: start a throwaway server when first needed. Otherwise a
  // libpq URL (postgres://user@host/db, or key=value pairs) of a server
  // where that user may CREATE DATABASE and set deadlock_timeout (a
  // superuser, or one granted both); checked by ensure_started().
  explicit PgCluster(std::string url = {});
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  // Starts the server (once) and checks the connection. The same Status on
  // every call after a failure; on a URL's server it names the URL, without
  // its password (engine/engine_url.h), and never prints that password.
  Status ensure_started();
  // A database no other run is using, until given back.
  Status lease(std::unique_ptr<PgDatabase>& out);
  void give_back(std::unique_ptr<PgDatabase> db);
  // Null when an external server is used or before the start.
  const PostgresServer* server() const { return server_.get(); }
  // The URL given (with its password, if any); empty for twice's own server.
  const std::string& url() const { return url_; }
  // "15.14 (Debian 15.14-0+deb12u1)": the server's version (empty before the start).
  const std::string& version() const { return version_; }

 private:
  std::string conninfo_for(const std::string& dbname) const;
  Status check_rights();

  std::mutex mutex_;
  std::string url_;
  bool tried_ = false;
  Status started_;
  std::string version_;
  std::unique_ptr<PostgresServer> server_;
  std::unique_ptr<PgConnection> admin_;
  DatabasePool<PgDatabase> databases_;
};

}  // namespace twice::engine
