// CachedConnection: a RawConnection over a SQLite connection it owns, which
// prepares each statement text once and keeps it: the checker's oracle
// queries are the same nine or so texts in every run, and compiling them cost
// a fifth of a short run when the connection was new each run (issue #12).
// Used from one thread at a time; see env/run_database.h for who keeps one.
#pragma once

#include <map>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "env/raw_connection.h"

namespace twice::env {

class CachedConnection final : public RawConnection {
 public:
  // Opens `path` as open_database() does (throws std::runtime_error when it cannot).
  explicit CachedConnection(const std::string& path);
  ~CachedConnection() override;
  CachedConnection(const CachedConnection&) = delete;
  CachedConnection& operator=(const CachedConnection&) = delete;

  Engine engine() const override { return Engine::kSqlite; }
  Result query(std::string_view sql, const std::vector<Value>& params = {}) override;
  Status exec_script(const std::string& sql) override;
  // query(), and when the database is locked (a COMMIT waiting for readers
  // holds PENDING), the same query on a connection opened for this read with
  // immutable=1, which takes no lock: between two scheduling points the file
  // holds exactly what is committed (a statement runs whole in one step, the
  // journal is in memory, and nothing spills uncommitted pages into a run's
  // small database), so that read is the committed state. Without it, the
  // ack-time check read "no credit" and reported a false ack_before_commit.
  // Its answer from this connection is kept with the database's data version
  // (below).
  Result query_committed(std::string_view sql) override;
  // Each query as query() answers it, all inside one read transaction
  // (BEGIN ... COMMIT) when none is open: the checker's oracle queries at
  // quiescence, when no other connection can commit in between, so each
  // answer is the one it would get alone. Seven autocommit reads took and
  // dropped the file's SHARED lock seven times, each re-reading the header
  // (a quarter of the checker's instructions, issue #12).
  // A query that query_committed() answered while the database held what
  // this transaction reads takes that answer instead of running again: the
  // pager's data version (SQLITE_FCNTL_DATA_VERSION) changes whenever it
  // finds the file's change counter moved, which every commit of another
  // connection does, and the reset between runs does too (env/run_database.h).
  // It is the test SQLite itself trusts its page cache by. So the ack-time
  // read of credits_sql serves the checker at quiescence when nothing was
  // committed after the ack.
  std::vector<Result> query_each(const std::vector<std::string>& sqls) override;
  // query_each(), its rows read straight off each statement (or off the
  // kept answer) into `sink`: no Result is built.
  std::vector<Status> read_each(const std::vector<std::string>& sqls, const RowSink& sink) override;
  // The ack-time check, at every ack: the rows of query_committed(sql)
  // whose first column reads as `key`. Once the whole answer has grown past
  // kReadWholeUpTo rows, they are read by a statement of `sql` keyed on that
  // column (keyed_text()), so SQLite reads one order's rows, not every
  // order's. Until then, and for a `sql` that cannot be keyed so, the answer
  // is read whole, as query_committed() reads it, and its rows are visited
  // where they are kept (the answer query_each() and read_each() may take
  // again).
  bool find_committed(std::string_view sql, std::string_view key,
                      const std::function<bool(const RowView&)>& visit) override;

  // True when nothing is under way (no transaction, no statement stepping)
  // and no statement changed the connection itself (env/confinement.h): it
  // may serve another run as a fresh one would.
  bool reusable() const;
  sqlite3* handle() const { return conn_; }

 private:
  // The pager's data version: what this connection saw at its last read;
  // empty when SQLite cannot tell.
  std::optional<unsigned> data_version() const;
  // Calls answer(i, kept) for each of `sqls`, in one read transaction of our
  // own when there are several and none is open: those with no kept answer
  // first, then the rest with their kept answer for the data version read
  // (null: none, query again). Otherwise in order, each with null.
  void in_one_read(const std::vector<std::string>& sqls,
                   const std::function<void(std::size_t, const Result* kept)>& answer);
  // The statement for `sql`, prepared on first use and kept; nullptr (and
  // `error` set) when it does not prepare.
  sqlite3_stmt* statement(std::string_view sql, Status& error);
  // query_committed()'s answer, where it is kept (kept_, or last_ when it
  // is not kept): valid until the next call.
  const Result& read_committed(std::string_view sql);
  // find_committed()'s statement for `sql`: `sql` inside a CTE, its rows
  // filtered on the first column by parameter ?1; nullptr when `sql` cannot
  // be read that way (it does not prepare, writes, has no columns, or the
  // CTE does not prepare). Made once per text and kept.
  const std::string* keyed_text(std::string_view sql);
  // Hands `read` a statement of `sql` prepared on a connection to the file
  // opened with immutable=1, which takes no lock (the committed state while
  // a COMMIT holds PENDING: query_committed()); false when that connection
  // or statement cannot be made.
  bool on_the_file(std::string_view sql, const std::function<void(sqlite3_stmt*)>& read) const;
  // Whether `sql` is prepared here and reads only.
  bool reads_only(std::string_view sql) const;
  // A kept answer of `sql` for the data version the open read transaction
  // sees; nullptr when none, or when no read transaction is under way.
  const Result* kept_answer(std::string_view sql) const;

  // find_committed() reads an answer of up to this many rows whole (the
  // first read of a text is whole, so its size is known): a keyed read costs
  // a scan and a statement of its own, and keeps nothing for quiescence.
  static constexpr std::size_t kReadWholeUpTo = 16;
  struct KeptAnswer {
    unsigned data_version;
    Result result;
  };
  std::string path_;
  sqlite3* conn_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
  std::map<std::string, KeptAnswer, std::less<>> kept_;  // by statement text, from query_committed()
  std::map<std::string, std::string, std::less<>> keyed_;  // keyed_text()'s, by the text keyed ("": none)
  Result last_;  // read_committed()'s answer when it was not kept
  std::vector<std::pair<std::string, sqlite3_stmt*>> batch_;  // read_each()'s last texts and their statements
  bool altered_ = false;
};

}  // namespace twice::env
