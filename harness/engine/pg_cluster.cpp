#include "engine/pg_cluster.h"

#include <unistd.h>

#include <fmt/format.h>
#include <libpq-fe.h>

#include "engine/engine_url.h"

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
      // libpq's reason may quote the URL whole, password and all.
      std::string why = err ? err : "?";
      if (err) PQfreemem(err);
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      return started_ = Status::error(fmt::format("--engine-url '{}' is not a PostgreSQL URL: {}",
                                                  engine_url_for_message(url_), without_url_passwords(why, url_)));
    }
    PQconninfoFree(options);
  }
  started_ = PgConnection::open(server_ ? server_->conninfo("postgres") : url_, admin_);
  // libpq names the host or socket it tried; the error names the URL, which
  // says the user and database too.
  if (!started_.ok() && !url_.empty())
    started_ = Status::error(fmt::format("--engine-url '{}': {}", engine_url_for_message(url_), started_.message()));
  if (started_.ok()) {
    const Result v = admin_->query("SHOW server_version");
    if (v.ok() && !v.empty()) version_ = v.rows[0][0].as_text();
  }
  if (started_.ok() && !url_.empty()) started_ = check_rights();
  return started_;
}

// A server twice did not start may not let its user do what every run needs:
// found here, before any cell, as one error, not as every statement of every
// run failing (which read as a handler losing payments).
Status PgCluster::check_rights() {
  const Result who = admin_->query("SELECT current_user AS name, (rolsuper OR rolcreatedb)::int AS creates FROM "
                                   "pg_roles WHERE rolname = current_user");
  if (!who.ok() || who.empty()) return Status::OK();  // not readable here: the runs will say what fails
  const std::string user = who.at(0, "name").as_text();
  const std::string server = engine_url_for_message(url_);
  if (who.at(0, "creates").as_int() == 0)
    return Status::error(fmt::format("--engine-url '{}': user '{}' may not create databases, and twice creates one "
                                     "per worker: ALTER ROLE {} CREATEDB, or connect as a user who may",
                                     server, user, user));
  // Each run's connections set deadlock_timeout (PgDatabase::session_options),
  // a superuser's setting unless granted.
  if (Status set = admin_->exec_script("SET deadlock_timeout = '1s'; RESET deadlock_timeout"); !set.ok())
    return Status::error(fmt::format("--engine-url '{}': user '{}' may not set deadlock_timeout, which twice sets "
                                     "on each of its connections: connect as a superuser, or GRANT SET ON PARAMETER "
                                     "deadlock_timeout TO {} (PostgreSQL 15 and later)",
                                     server, user, user));
  return Status::OK();
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
