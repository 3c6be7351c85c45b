// RawConnection: a connection to the run's database outside any scheduling,
// on whichever engine, for what the harness itself reads and writes (seeding
// the run, the checker's oracle queries). Statements run at once and
// completely; nothing yields. SQLite's is SqliteConnection (env/sqlite_db.h),
// PostgreSQL's engine::PgConnection. Used from one thread at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "env/row_view.h"
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
  // query_each(), with each query's rows handed to `sink` as they are read
  // rather than returned (the checker's oracle queries at quiescence), and
  // only its status returned. A query that fails may have handed rows before
  // it failed: the caller drops them, as a failed Result holds none. The
  // default hands on query_each()'s rows.
  virtual std::vector<Status> read_each(const std::vector<std::string>& sqls, const RowSink& sink) {
    std::vector<Status> out;
    out.reserve(sqls.size());
    std::vector<Result> answers = query_each(sqls);
    for (std::size_t i = 0; i < answers.size(); ++i) {
      for (const Row& row : answers[i].rows) sink(i, ValueRowView(row));
      out.push_back(std::move(answers[i].status));
    }
    return out;
  }
  // Hands `visit` the rows of query_committed(sql) whose first column reads
  // as `key` (RowView::text(0)), in order, until `visit` returns true; returns
  // whether it did. The ack-time check, at every ack: a connection that keeps
  // its answer (env/cached_connection.h) hands on the kept rows instead of a
  // copy of them.
  virtual bool find_committed(std::string_view sql, std::string_view key,
                              const std::function<bool(const RowView&)>& visit) {
    return find_row(query_committed(sql), key, visit);
  }

 protected:
  // find_committed()'s walk over an answer's rows.
  static bool find_row(const Result& answer, std::string_view key, const std::function<bool(const RowView&)>& visit) {
    for (const Row& row : answer.rows) {
      const ValueRowView view(row);
      if (!row.empty() && view.text(0) == key && visit(view)) return true;
    }
    return false;
  }
};

}  // namespace twice::env
