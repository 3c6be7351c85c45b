#include "blackbox/service_database.h"

#include <set>

#include <fmt/format.h>

#include "blackbox/loopback.h"
#include "engine/engine_url.h"
#include "engine/mariadb_connection.h"
#include "engine/mariadb_protocol.h"
#include "engine/pg_connection.h"
#include "env/sqlite_db.h"

namespace twice::blackbox {
namespace {

Status seed_rows(env::RawConnection& c, const Schema& schema, const std::vector<gateway::OrderSpec>& orders) {
  if (Status s = c.exec_script(schema.setup_sql_for(c.engine())); !s.ok()) return Status::error("setup_sql: " + s.message());
  std::set<std::string> users;
  for (const auto& o : orders) {
    const Result r = c.query(schema.insert_order_sql, {o.order_no, o.user, o.amount, o.currency});
    if (!r.ok()) return Status::error(fmt::format("seeding order {} (insert_order_sql): {}", o.order_no, r.status.message()));
    if (!users.insert(o.user).second) continue;
    const Result a = c.query(schema.insert_account_sql, {o.user});
    if (!a.ok()) return Status::error(fmt::format("seeding account {} (insert_account_sql): {}", o.user, a.status.message()));
  }
  return Status::OK();
}

}  // namespace

Status ServiceDatabase::open(const std::string& db, std::unique_ptr<ServiceDatabase>& out) {
  if (db.empty()) return Status::error("--db is missing: name the service's database (a SQLite file, postgres://..., mysql://...)");
  if (Status s = check_database_is_local(db); !s.ok()) return s;
  std::unique_ptr<ServiceDatabase> d(new ServiceDatabase());
  // An error names the database as every message names a URL: without its
  // password, which the client library's text does not show either.
  const std::string shown = engine::engine_url_for_message(db);
  if (db.starts_with("postgres://") || db.starts_with("postgresql://")) {
    std::unique_ptr<engine::PgConnection> pg;
    if (Status s = engine::PgConnection::open(db, pg); !s.ok())
      return Status::error(fmt::format("--db {}: cannot connect: {}", shown, s.message()));
    engine::quiet_notices(pg->handle());
    d->raw_ = std::move(pg);
  } else if (db.starts_with("mysql://")) {
    engine::MariadbAddress at;
    std::string error;
    if (!engine::parse_mariadb_url(db, at, error))
      return Status::error(fmt::format("--db {}: {}", shown, engine::without_url_passwords(error, db)));
    std::unique_ptr<engine::MariadbConnection> maria;
    if (Status s = engine::MariadbConnection::open(at, at.database, maria); !s.ok())
      return Status::error(fmt::format("--db {}: cannot connect: {}", shown, s.message()));
    d->raw_ = std::move(maria);
  } else if (db.find("://") != std::string::npos) {
    return Status::error(fmt::format("--db {}: unknown scheme; give a SQLite file, postgres://... or mysql://...", shown));
  } else {
    if (sqlite3_open_v2(db.c_str(), &d->sqlite_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      const std::string why = d->sqlite_ ? sqlite3_errmsg(d->sqlite_) : "out of memory";
      return Status::error(fmt::format("--db {}: cannot open the SQLite file: {}", db, why));
    }
    // The service holds its own connections: wait for its locks, as it waits for ours.
    sqlite3_busy_timeout(d->sqlite_, 10'000);
    d->raw_ = std::make_unique<env::SqliteConnection>(d->sqlite_);
  }
  out = std::move(d);
  return Status::OK();
}

ServiceDatabase::~ServiceDatabase() {
  raw_.reset();
  if (sqlite_) sqlite3_close_v2(sqlite_);
}

Status ServiceDatabase::seed(const Schema& schema, const std::vector<gateway::OrderSpec>& orders) {
  env::RawConnection& c = *raw_;
  // One transaction: on SQLite a statement outside one is a commit (and a
  // sync) of its own. MariaDB commits at each DDL statement regardless.
  if (Status s = c.exec_script("BEGIN"); !s.ok()) return Status::error("BEGIN: " + s.message());
  Status status = seed_rows(c, schema, orders);
  if (Status s = c.exec_script(status.ok() ? "COMMIT" : "ROLLBACK"); !s.ok() && status.ok())
    status = Status::error("COMMIT: " + s.message());
  return status;
}

}  // namespace twice::blackbox
