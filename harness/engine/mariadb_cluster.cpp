#include "engine/mariadb_cluster.h"

#include <unistd.h>

#include <fmt/format.h>

#include "engine/engine_url.h"

namespace twice::engine {

MariadbCluster::MariadbCluster(std::string url) : url_(std::move(url)) {}

MariadbCluster::~MariadbCluster() {
  const std::vector<std::string> created = databases_.close_all();
  // Databases made on someone else's server go; our own server goes whole.
  if (admin_ && !server_)
    for (const auto& name : created) (void)admin_->exec_script(fmt::format("DROP DATABASE IF EXISTS `{}`", name));
  admin_.reset();
}

Status MariadbCluster::ensure_started() {
  std::lock_guard lock(mutex_);
  if (tried_) return started_;
  tried_ = true;
  if (url_.empty()) {
    started_ = MariadbServer::start(server_);
    if (!started_.ok()) return started_;
    address_.socket = server_->socket();
  } else {
    std::string error;
    // A part of a password written unencoded can read as a port ("pa/ss": 'pa').
    if (!parse_mariadb_url(url_, address_, error))
      return started_ = Status::error(
                 fmt::format("--engine-url '{}': {}", engine_url_for_message(url_), without_url_passwords(error, url_)));
  }
  started_ = MariadbConnection::open(address_, "", admin_);
  if (!started_.ok() && !url_.empty())
    started_ = Status::error(fmt::format("--engine-url '{}': {}", engine_url_for_message(url_), started_.message()));
  if (started_.ok()) {
    const Result v = admin_->query("SELECT VERSION()");
    if (v.ok() && !v.empty()) version_ = v.rows[0][0].as_text();
    // No row on a server without the variable (before 10.6.18).
    const Result snapshot = admin_->query("SHOW GLOBAL VARIABLES LIKE 'innodb_snapshot_isolation'");
    if (snapshot.ok() && !snapshot.empty())
      settings_.emplace_back(snapshot.rows[0][0].as_text(), snapshot.rows[0][1].as_text());
  }
  if (started_.ok() && !url_.empty()) started_ = check_rights();
  return started_;
}

// A server twice did not start may not let its user do what every run needs:
// found here, before any cell, as one error. Without PROCESS, SHOW ENGINE
// INNODB STATUS fails, a statement waiting for a lock is taken for a slow
// one, and the run waits for ever; without CREATE or TRIGGER every run fails.
Status MariadbCluster::check_rights() {
  const Result who = admin_->query("SELECT CURRENT_USER()");
  const std::string user = who.ok() && !who.empty() ? who.rows[0][0].as_text() : "?";
  const std::string server = engine_url_for_message(url_);
  if (!admin_->query("SHOW ENGINE INNODB STATUS").ok())
    return Status::error(fmt::format("--engine-url '{}': user {} may not read SHOW ENGINE INNODB STATUS, which twice reads "
                                     "to tell a statement waiting for a lock from a slow one: GRANT PROCESS ON *.* "
                                     "TO {}",
                                     server, user, user));
  const std::string probe = fmt::format("twice_{}_rights", ::getpid());
  Status st = admin_->exec_script(fmt::format("CREATE DATABASE `{}`", probe));
  if (!st.ok())
    return Status::error(fmt::format("--engine-url '{}': user {} may not create databases, and twice creates one per "
                                     "worker: GRANT ALL ON `twice\\_%`.* TO {} ({})",
                                     server, user, user, st.message()));
  st = admin_->exec_script(fmt::format("CREATE TABLE `{0}`.t (x INT); CREATE TRIGGER `{0}`.tr AFTER INSERT ON "
                                       "`{0}`.t FOR EACH ROW SET @twice_rights = 1",
                                       probe));
  const Status dropped = admin_->exec_script(fmt::format("DROP DATABASE `{}`", probe));
  if (!st.ok())
    return Status::error(fmt::format("--engine-url '{}': user {} may not create tables and triggers in the databases it "
                                     "creates (the reference schema keeps a trigger): GRANT ALL ON `twice\\_%`.* TO "
                                     "{} ({})",
                                     server, user, user, st.message()));
  if (!dropped.ok())
    return Status::error(fmt::format("--engine-url '{}': user {} may not drop the databases it creates: GRANT ALL ON "
                                     "`twice\\_%`.* TO {} ({})",
                                     server, user, user, dropped.message()));
  return Status::OK();
}

Status MariadbCluster::lease(std::unique_ptr<MariadbDatabase>& out) {
  out.reset();
  if (Status s = ensure_started(); !s.ok()) return s;
  return databases_.lease(
      out, [this](const std::string& name) { return admin_->exec_script(fmt::format("CREATE DATABASE `{}`", name)); },
      [this](const std::string& name, std::unique_ptr<MariadbDatabase>& db) { return MariadbDatabase::open(address_, name, db); });
}

void MariadbCluster::give_back(std::unique_ptr<MariadbDatabase> db) { databases_.give_back(std::move(db)); }

}  // namespace twice::engine
