// SqliteDb: the Db a task sees, one SQLite connection per task onto the run's
// database file (on tmpfs; docs/architecture.md says why not memdb). Each
// exec() is a scheduling point. SQLITE_BUSY is answered as SQLite answers it
// with a busy handler (tests/env/sqlite_locking_test.cpp): a transaction that
// holds a read lock and wants the write lock another holds gets it at once;
// any other statement parks its task until the lock it was refused could be
// granted (env/lock_ledger.h, Scheduler::block_on_db), and the step that
// resumes it is its retry. Prepared statements are cached per connection.
// Used by one task at a time, from its own fiber.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <vector>
#include <string>

#include <sqlite3.h>

#include "env/raw_connection.h"
#include "env/task_db.h"
#include "sim/scheduler.h"
#include "twice/db.h"

namespace twice::env {

// SQLite result code -> Status; binds positional parameters (not called
// bind(): with a vector argument, ADL would prefer std::bind); reads a column.
// Shared by every Db over SQLite (this one, stress mode's RealDb).
Status status_from(sqlite3* conn, int rc);
void bind_params(sqlite3_stmt* stmt, std::span<const Value> params);
Value column(sqlite3_stmt* stmt, int c);

// Runs `sql` (one or more statements, no parameters) on a raw connection,
// outside any scheduling. Returns the error text, empty on success. SQLite
// out of memory (SQLITE_NOMEM, a cell past --cell-memory) throws
// std::bad_alloc: the process's condition, as operator new's, not the run's
// (run::simulate() rethrows it, and the cell says "out of memory").
std::string exec_script(sqlite3* conn, const std::string& sql);
// A fresh path for one run's database on a RAM-backed file system ($TWICE_DB_DIR
// when set, else /dev/shm when there is one, else the temporary folder), named
// "twice-<pid>-<random>-<n>.db". remove_database() deletes it and its journals.
std::string fresh_database_path();
// The folder those paths are in.
std::string database_folder();
void remove_database(const std::string& path);
// Removes every database file the process `pid` created (and left behind when
// it died). Called by the parent of a cell's process, before reaping it.
void remove_process_databases(int pid);
// What a statement that is empty or only a comment answers.
inline constexpr const char* kNoStatement = "no SQL statement to run (the text is empty or only a comment)";
// Opens a connection to the database file `path` with SQLite's own locking
// (readers proceed while a writer holds RESERVED), an in-memory rollback
// journal and no fsync: a crashed connection rolls back, nothing is durable.
// The connection is confined (env/confinement.h) and uses the unix VFS
// through env/journal_vfs.h (journal existence answered in-process).
sqlite3* open_database(const std::string& path);
// Runs one query outside the scheduler; the checker's reads.
Result query(sqlite3* conn, std::string_view sql, const std::vector<Value>& params = {});
// The same with a statement already prepared on `conn` (a cache's): binds
// `params`, steps to the end and leaves it reset with no bindings.
Result query_prepared(sqlite3* conn, sqlite3_stmt* stmt, const std::vector<Value>& params);

// A RawConnection over a borrowed SQLite connection; the caller closes it.
class SqliteConnection final : public RawConnection {
 public:
  explicit SqliteConnection(sqlite3* conn) : conn_(conn) {}
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

// The merchant process's connections to the run's database, reused from one
// task to the next as a server's pool would, each with its prepared
// statements. Opening a connection (and parsing the schema) costs more than a
// whole scheduling point, so this keeps runs cheap. Used from the task that
// holds the baton; destroyed after every task ended.
class ConnectionPool {
 public:
  struct Connection {
    sqlite3* handle = nullptr;
    std::map<std::string, sqlite3_stmt*, std::less<>> statements;
    bool altered = false;  // a statement changed the connection itself (env/confinement.h)
    bool keep = true;      // false: opened unconfigured (under another's PENDING lock); not for later runs
    sqlite3_stmt* probe = nullptr;  // reads the schema's page: could a fresh connection be configured now?
    int task = 0;  // the task holding it (a SqliteDb's); 0: idle
  };
  explicit ConnectionPool(std::string database_path) : path_(std::move(database_path)) {}
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;
  Connection* acquire();
  // Takes back a connection with no transaction open.
  void release(Connection* connection);
  // The tasks whose connections hold a lock that keeps `self`, which holds
  // `held` (SQLITE_LOCK_NONE ...), from the level `refused`, by the rules of
  // env/lock_ledger.h; in task order. For the trace: "waits for the lock T2 holds".
  std::vector<int> lock_holders(const Connection* self, int held, int refused) const;
  // Between runs on the same file (env/run_database.h): true when every
  // connection is back, with no transaction or statement under way.
  bool idle() const;
  // Makes the pool serve the next run as fresh connections would: a
  // connection a handler altered (a PRAGMA, a TEMP object) or one opened
  // unconfigured is closed, the others forget the last run's last insert
  // rowid and wait as spares: acquire() hands one out where the run would
  // open a connection, if one opened then would be configured. Call when idle().
  void prepare_next_run();

 private:
  std::string path_;
  std::vector<std::unique_ptr<Connection>> all_;
  std::vector<Connection*> idle_;   // released during this run, handed out last-in first-out
  std::vector<Connection*> spare_;  // kept from earlier runs, not yet used in this one
};

class SqliteDb final : public TaskDb {
 public:
  // Borrows a connection from `pool` for the task's lifetime.
  SqliteDb(sim::Scheduler& scheduler, ConnectionPool& pool);
  ~SqliteDb() override;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  Result exec(std::string_view sql, std::initializer_list<Value> params) override;
  Result exec(std::string_view sql, const std::vector<Value>& params) override;
  // True when a transaction is open on this connection.
  bool in_transaction() const override;
  // True once this connection committed a change (a write that changed rows,
  // in autocommit or in a transaction that committed).
  bool committed_writes() const override { return committed_writes_; }

 private:
  // SQLITE_BUSY met: waits for the lock (true: give up, the task is killed or
  // was the deadlock victim); `text` is the statement as traced.
  bool wait_for_lock(const std::string& text);
  // Both exec()s: the parameters as they are passed, never copied.
  Result run(std::string_view sql, std::span<const Value> params);

  sim::Scheduler& scheduler_;
  ConnectionPool& pool_;
  ConnectionPool::Connection* connection_;
  sqlite3* conn_;
  std::map<std::string, sqlite3_stmt*, std::less<>>& statements_;
  std::vector<std::string> uncommitted_;  // writes of the open transaction, as traced
  bool committed_writes_ = false;
};

}  // namespace twice::env
