#include "env/seed.h"

#include <memory>
#include <new>
#include <set>

#include <fmt/format.h>

#include "env/sqlite_db.h"

namespace twice::env {

namespace {

using Statement = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

Statement prepare(sqlite3* conn, const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(conn, sql.c_str(), -1, &stmt, nullptr);
  return Statement(stmt, &sqlite3_finalize);
}

Status step(sqlite3* conn, sqlite3_stmt* stmt, const std::vector<Value>& params, const std::string& what) {
  bind_params(stmt, params);
  const int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::OK();
  if ((rc & 0xff) == SQLITE_NOMEM) throw std::bad_alloc();  // the process's, as exec_script() says
  return Status::error(fmt::format("{}: {}", what, sqlite3_errmsg(conn)));
}

Status seed_rows(sqlite3* conn, const Schema& schema, const std::vector<SeedOrder>& orders) {
  Statement insert_order = prepare(conn, schema.insert_order_sql);
  if (!insert_order) return Status::error(fmt::format("seeding orders: {}", sqlite3_errmsg(conn)));
  Statement insert_account = prepare(conn, schema.insert_account_sql);
  if (!insert_account) return Status::error(fmt::format("seeding accounts: {}", sqlite3_errmsg(conn)));
  std::set<std::string> users;
  for (const auto& o : orders) {
    if (Status s = step(conn, insert_order.get(), {o.order_no, o.user, o.amount, o.currency}, "seeding order " + o.order_no);
        !s.ok())
      return s;
    if (!users.insert(o.user).second) continue;
    if (Status s = step(conn, insert_account.get(), {o.user}, "seeding account " + o.user); !s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

Status seed_database(sqlite3* conn, const Schema& schema, const std::vector<SeedOrder>& orders) {
  if (auto err = exec_script(conn, schema.setup_sql); !err.empty()) return Status::error("the handler's schema: " + err);
  if (auto err = exec_script(conn, "BEGIN"); !err.empty()) return Status::error(err);
  Status status = seed_rows(conn, schema, orders);
  if (auto err = exec_script(conn, status.ok() ? "COMMIT" : "ROLLBACK"); !err.empty() && status.ok())
    status = Status::error(err);
  return status;
}

}  // namespace twice::env
