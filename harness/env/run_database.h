// RunDatabase: the run's SQLite database file and every connection to it
// (the tasks' pool, the checker's), kept by one worker thread from one run to
// the next and reset in place to the seeded image before each run.
//
// Why: opening four connections per run (each forces a read and parse of the
// schema), preparing the same statements again on each, and closing them cost
// more than half of a short run (issue #12's profile). Kept open, a run pays
// only for its statements. What a fresh file and fresh connections gave must
// still hold, so a reset:
// - writes the seeded image's bytes over the file (and truncates what the run
//   added), while no connection holds a lock or a transaction. The file is
//   held in memory (env/held_file.h), so that is a copy of the chunks the
//   run wrote, and the runs' reads and writes are no system calls;
// - stamps the image's file change counter (and its version-valid-for copy)
//   with a value this file never had before. SQLite keeps a connection's page
//   cache across transactions when the header's change counter is the one it
//   saw last; a counter reused from an earlier run would let a connection read
//   that run's pages. A counter past every one seen makes every connection
//   drop its cache at its next read, as a fresh connection starts empty. The
//   counter is not part of any query's answer;
// - closes a connection a handler altered (a PRAGMA with a value, a TEMP
//   object: env/confinement.h) and forgets the others' last insert rowid;
// - starts over with a new file and new connections when the seed differs,
//   when a connection is still in a transaction, or after a run that threw.
//
// Threads: of_this_thread() is the calling thread's own; a process forked
// from a thread that had one leaves the parent's file and connections alone
// (it makes its own). The file is removed when the thread ends or the process
// exits normally; a process that dies leaves it to its parent's
// remove_process_databases().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <sqlite3.h>

#include "env/cached_connection.h"
#include "env/held_file.h"
#include "env/sqlite_db.h"

namespace twice::env {

class RunDatabase {
 public:
  RunDatabase() = default;
  ~RunDatabase();
  RunDatabase(const RunDatabase&) = delete;
  RunDatabase& operator=(const RunDatabase&) = delete;

  // The calling thread's, made on first use.
  static RunDatabase& of_this_thread();

  // Leaves the file as the seeded image of `key` (env/seeded_database.h:
  // `key` names everything `seed` depends on), ready for a run. Throws
  // std::runtime_error when the file cannot be written or opened.
  void reset(const std::string& key, const std::function<void(sqlite3*)>& seed);
  // The tasks' connections and the checker's, for the run after reset().
  ConnectionPool& connections() { return *pool_; }
  CachedConnection& checker() { return *checker_; }
  // Closes every connection and removes the file: after a run that threw, or
  // to compare with fresh connections. The next reset() starts over.
  void discard();
  // For a process about to _exit(): removes the file and leaves the
  // connections open. Closing them (finalizing every prepared statement,
  // freeing each page cache) was 1.5% of the main job, for memory the exit
  // frees anyway; nothing of them outlives the process.
  void remove_before_exit();

 private:
  void create(const std::string& key, std::shared_ptr<const std::string> image);
  bool rewrite_in_place();

  pid_t owner_ = 0;  // the process that made the file and connections
  std::string key_;
  std::string path_;
  int fd_ = -1;  // onto path_ (the file as created); closed only after the connections
  std::shared_ptr<HeldBytes> held_;  // path_'s bytes, which its connections read and the resets write
  std::shared_ptr<const std::string> image_;
  std::uint32_t counter_ = 0;  // the highest change counter the file has had
  std::unique_ptr<ConnectionPool> pool_;
  std::unique_ptr<CachedConnection> checker_;
};

}  // namespace twice::env
