// SqliteRawConnection: RawConnection over a borrowed sqlite3 handle (the
// run's checker connection). The caller keeps the handle open and closes it.
// Not thread-safe.
#pragma once

#include <sqlite3.h>

#include "engine/raw_connection.h"
#include "env/sqlite_db.h"

namespace twice::engine {

class SqliteRawConnection final : public RawConnection {
 public:
  explicit SqliteRawConnection(sqlite3* conn) : conn_(conn) {}
  Engine engine() const override { return Engine::kSqlite; }
  Result query(std::string_view sql, const std::vector<Value>& params = {}) override {
    return env::query(conn_, sql, params);
  }
  Status exec_script(const std::string& sql) override {
    const std::string err = env::exec_script(conn_, sql);
    return err.empty() ? Status::OK() : Status::error(err);
  }
  sqlite3* handle() const { return conn_; }

 private:
  sqlite3* conn_;
};

}  // namespace twice::engine
