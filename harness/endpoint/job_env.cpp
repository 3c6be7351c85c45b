#include "endpoint/job_env.h"

#include <fmt/format.h>

namespace twice::endpoint {

JobEnv::JobEnv(Env& task_env) : inner_(task_env), db_(*this) {}

Result JobEnv::WatchedDb::exec(std::string_view sql, std::initializer_list<Value> params) {
  Result r = env_.inner_.db().exec(sql, params);
  env_.saw(sql, r.status);
  return r;
}

Result JobEnv::WatchedDb::exec(std::string_view sql, const std::vector<Value>& params) {
  Result r = env_.inner_.db().exec(sql, params);
  env_.saw(sql, r.status);
  return r;
}

void JobEnv::saw(std::string_view sql, const Status& status) {
  if (failure_) return;
  // After a lost race (SQLite's busy deadlock, a serialization failure), an
  // engine may refuse the rest of the transaction with a plain error
  // ("current transaction is aborted"): that is the race's echo, not a
  // statement the schema cannot run.
  if (status.is_retryable()) lost_a_race_ = true;
  if (status.code() != Status::Code::kError || lost_a_race_) return;
  // SQLite's own words for a lock, which a statement's first prepare can meet
  // (reading the schema while another connection commits) and which the
  // SQLite Db passes on as a plain error: a race too, not a missing table.
  if (status.message().starts_with("database is locked") || status.message().starts_with("database table is locked"))
    return;
  constexpr std::size_t kShown = 80;
  const std::string shown = sql.size() > kShown ? std::string(sql.substr(0, kShown - 3)) + "..." : std::string(sql);
  failure_ = fmt::format("`{}`: {}", shown, status.message());
}

}  // namespace twice::endpoint
