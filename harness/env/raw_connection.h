// RawConnection: a connection to the run's database outside any scheduling,
// on whichever engine, for what the harness itself reads and writes (seeding
// the run, the checker's oracle queries). Statements run at once and
// completely; nothing yields. SQLite's is SqliteConnection (env/sqlite_db.h),
// PostgreSQL's engine::PgConnection. Used from one thread at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "twice/db.h"
#include "twice/engine.h"

namespace twice::env {

class RawConnection {
 public:
  virtual ~RawConnection() = default;
  virtual Engine engine() const = 0;
  // One statement with positional parameters (? or ?N); all its rows.
  virtual Result query(std::string_view sql, const std::vector<Value>& params = {}) = 0;
  // One or more statements without parameters (a schema's setup SQL).
  virtual Status exec_script(const std::string& sql) = 0;
  // A read-only query without parameters that answers what is committed now,
  // also while another connection holds a lock that would make query() wait
  // or fail (the checker's reads at an ack, in the middle of a run). The
  // default is query(): on a server engine a read sees the last committed
  // state without waiting.
  virtual Result query_committed(std::string_view sql) { return query(sql); }
  // Several read-only queries without parameters, each as query() would
  // answer it, in order. A server engine sends them in one round trip (the
  // checker's oracle queries); the default runs them one by one.
  virtual std::vector<Result> query_each(const std::vector<std::string>& sqls) {
    std::vector<Result> out;
    out.reserve(sqls.size());
    for (const auto& sql : sqls) out.push_back(query(sql));
    return out;
  }
};

}  // namespace twice::env
