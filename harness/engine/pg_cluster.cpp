#include "engine/pg_cluster.h"

#include <unistd.h>

#include <fmt/format.h>
#include <libpq-fe.h>

namespace twice::engine {
namespace {

std::string quote_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

PgCluster::PgCluster(std::string url) : url_(std::move(url)) {}

PgCluster::~PgCluster() {
  const std::vector<std::string> created = databases_.close_all();
  // Databases made on someone else's server go; our own server goes whole.
  if (admin_ && !server_)
    for (const auto& name : created) (void)admin_->exec_script(fmt::format("DROP DATABASE IF EXISTS {}", name));
  admin_.reset();
}

std::string PgCluster::conninfo_for(const std::string& dbname) const {
  if (server_) return server_->conninfo(dbname);
  // The URL's own settings, with the database replaced.
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(url_.c_str(), &err);
  if (!options) {
    if (err) PQfreemem(err);
    return url_;
  }
  std::string out;
  for (PQconninfoOption* o = options; o->keyword; ++o) {
    if (!o->val || std::string_view(o->keyword) == "dbname") continue;
    out += fmt::format("{}={} ", o->keyword, quote_value(o->val));
  }
  PQconninfoFree(options);
  return out + "dbname=" + quote_value(dbname);
}

Status PgCluster::ensure_started() {
  std::lock_guard lock(mutex_);
  if (tried_) return started_;
  tried_ = true;
  if (url_.empty()) {
    started_ = PostgresServer::start(server_);
    if (!started_.ok()) return started_;
  } else {
    char* err = nullptr;
    PQconninfoOption* options = PQconninfoParse(url_.c_str(), &err);
    if (!options) {
      started_ = Status::error(fmt::format("--engine-url '{}' is not a PostgreSQL URL: {}", url_, err ? err : "?"));
      if (err) PQfreemem(err);
      return started_;
    }
    PQconninfoFree(options);
  }
  started_ = PgConnection::open(server_ ? server_->conninfo("postgres") : url_, admin_);
  return started_;
}

Status PgCluster::lease(std::unique_ptr<PgDatabase>& out) {
  out.reset();
  if (Status s = ensure_started(); !s.ok()) return s;
  return databases_.lease(
      out, [this](const std::string& name) { return admin_->exec_script(fmt::format("CREATE DATABASE {}", name)); },
      [this](const std::string& name, std::unique_ptr<PgDatabase>& db) { return PgDatabase::open(conninfo_for(name), db); });
}

void PgCluster::give_back(std::unique_ptr<PgDatabase> db) { databases_.give_back(std::move(db)); }

}  // namespace twice::engine
