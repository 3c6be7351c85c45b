#include "engine/mariadb_cluster.h"

#include <unistd.h>

#include <fmt/format.h>

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
    if (!parse_mariadb_url(url_, address_, error)) return started_ = Status::error(error);
  }
  started_ = MariadbConnection::open(address_, "", admin_);
  if (started_.ok()) {
    const Result v = admin_->query("SELECT VERSION()");
    if (v.ok() && !v.empty()) version_ = v.rows[0][0].as_text();
  }
  return started_;
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
