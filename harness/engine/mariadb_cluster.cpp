#include "engine/mariadb_cluster.h"

#include <unistd.h>

#include <fmt/format.h>

namespace twice::engine {

MariadbCluster::MariadbCluster(std::string url) : url_(std::move(url)) {}

MariadbCluster::~MariadbCluster() {
  idle_.clear();
  // Databases made on someone else's server go; our own server goes whole.
  if (admin_ && !server_)
    for (const auto& name : created_) (void)admin_->exec_script(fmt::format("DROP DATABASE IF EXISTS `{}`", name));
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
  std::lock_guard lock(mutex_);
  if (!idle_.empty()) {
    out = std::move(idle_.back());
    idle_.pop_back();
    return Status::OK();
  }
  const std::string name = fmt::format("twice_{}_{}", ::getpid(), created_.size());
  if (Status s = admin_->exec_script(fmt::format("CREATE DATABASE `{}`", name)); !s.ok())
    return Status::error(fmt::format("cannot create database {}: {}", name, s.message()));
  created_.push_back(name);
  return MariadbDatabase::open(address_, name, out);
}

void MariadbCluster::give_back(std::unique_ptr<MariadbDatabase> db) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(db));
}

}  // namespace twice::engine
