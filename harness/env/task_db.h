// TaskDb: the Db one task holds, whatever the engine, with the two questions
// the run asks about it after the handler returned. SqliteDb and
// engine::PgDb implement it. Used by one task at a time, from its own fiber.
#pragma once

#include <memory>

#include "env/commit_watch.h"
#include "twice/db.h"

namespace twice::env {

class TaskDb : public Db {
 public:
  // True when a transaction is open on this connection.
  virtual bool in_transaction() const = 0;
  // True once this connection committed a change (a write that changed rows,
  // in autocommit or in a transaction that committed).
  virtual bool committed_writes() const = 0;
  // Tells `watch` (nullptr: nobody) of each statement that may publish
  // writes, before it runs and once it published them.
  void watch_commits(CommitWatch* watch) { commit_watch_ = watch; }

 protected:
  CommitWatch* commit_watch_ = nullptr;
};

// Where a task's Db comes from when the run's database is not SQLite's (a
// server engine's run, engine::PgRun): the env does not know the engines.
class TaskDbSource {
 public:
  virtual ~TaskDbSource() = default;
  // A connection for the task holding the baton, for its lifetime.
  virtual std::unique_ptr<TaskDb> open() = 0;
};

}  // namespace twice::env
