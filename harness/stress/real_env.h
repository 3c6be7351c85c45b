// The real-thread Env: what `twice stress` hands the unchanged reference
// handlers instead of the simulator's TaskEnv. Nothing here is a scheduling
// point and nothing is traced: statements run on a real SQLite connection onto
// a database FILE in WAL mode, locks live in a process-wide table that expires
// entries on the steady clock, and Clock::sleep really sleeps. What a run shows
// is what the operating system's scheduler happened to do.
//
// Threads: RealLocks and RealClock are thread-safe and meant to be shared by
// every worker. RealDb and RealEnv are not: each belongs to one worker thread
// (a server thread with its own pooled connection), which reuses it from one
// delivery to the next. SQLITE_BUSY waits in a busy handler for up to the
// busy timeout, then reaches the handler as Status::busy, as in production.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <sqlite3.h>

#include "stress/worker_db.h"
#include "twice/env.h"

namespace twice::stress {

// Opens (creating it if need be) the database file at `path` for one thread:
// WAL journal, synchronous=NORMAL (a commit writes the WAL without fsync, as
// most deployments of SQLite in WAL mode do), and a busy handler that backs off
// from 20 us to 1 ms between attempts for at least `busy_timeout`.
// Returns nullptr and sets `error` on failure.
sqlite3* open_wal_connection(const std::string& path, Micros busy_timeout, std::string& error);

// Micros since construction, on std::chrono::steady_clock. sleep() blocks the
// calling thread. Thread-safe: nothing changes after construction.
class RealClock final : public Clock {
 public:
  RealClock() : epoch_(std::chrono::steady_clock::now()) {}
  Micros now() override;
  void sleep(Micros duration) override;

 private:
  const std::chrono::steady_clock::time_point epoch_;
};

// The Redis-like lock table of one stress run, shared by every worker. Each
// operation is atomic under one mutex, like a single Redis command; entries
// expire when `clock` passes their TTL. `clock.now()` must be thread-safe.
class RealLocks final : public Locks {
 public:
  explicit RealLocks(Clock& clock) : clock_(clock) {}
  bool set_if_absent(std::string_view key, std::string_view owner, Micros ttl) override;
  std::optional<std::string> get(std::string_view key) override;
  bool del(std::string_view key) override;
  bool compare_and_delete(std::string_view key, std::string_view owner) override;

 private:
  struct Entry {
    std::string owner;
    Micros expires_at;
  };
  using Table = std::map<std::string, Entry, std::less<>>;
  // The live entry for `key`, or end() after dropping an expired one. Call with mutex_ held.
  Table::iterator live(std::string_view key);

  Clock& clock_;
  std::mutex mutex_;
  Table entries_;
};

// One SQLite connection onto the stress database, with prepared statements
// cached per SQL text. Not thread-safe: one worker's.
class RealDb final : public WorkerDb {
 public:
  // Opens the connection; when that fails, status() says why and every exec() returns that error.
  RealDb(const std::string& path, Micros busy_timeout);
  ~RealDb() override;
  RealDb(const RealDb&) = delete;
  RealDb& operator=(const RealDb&) = delete;

  const Status& status() const override { return open_status_; }
  Result exec(std::string_view sql, std::initializer_list<Value> params = {}) override;
  Result exec(std::string_view sql, const std::vector<Value>& params) override;
  bool in_transaction() const override;
  // The raw connection, for the checker's reads once the workers are parked.
  sqlite3* connection() const { return conn_; }

 private:
  sqlite3* conn_ = nullptr;
  Status open_status_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

// A worker's Env: its own WorkerDb (a RealDb onto the SQLite file, or a
// connection to a server engine), the run's shared locks and clock. Tokens
// are "<prefix>.<n>", unique in the run as long as prefixes are. note()
// lines are dropped: there is no trace under real threads.
class RealEnv final : public Env {
 public:
  // On a RealDb onto the SQLite file at `path`.
  RealEnv(const std::string& path, Micros busy_timeout, RealLocks& locks, Clock& clock, std::string token_prefix);
  // On any worker's Db (never null).
  RealEnv(std::unique_ptr<WorkerDb> db, RealLocks& locks, Clock& clock, std::string token_prefix);
  Db& db() override { return *db_; }
  Locks& locks() override { return locks_; }
  Clock& clock() override { return clock_; }
  std::string token() override;
  void note(std::string_view) override {}
  // Stress mode fires only the gateway's genuine notifications, so every
  // signature is taken as valid; it measures races, not authentication.
  Status verify(const Notify&) override { return Status::OK(); }
  // There is no gateway to ask in stress mode.
  std::optional<Notify> query_payment(std::string_view) override { return std::nullopt; }
  // The first early response is the delivery's answer, whatever handle() returns later.
  void respond_now(const Reply& reply) override {
    if (!early_reply_) early_reply_ = reply;
  }
  // Stress mode measures the database's races; it has no simulated services,
  // and a handler that calls one is told so rather than shown a success. The
  // first service called is kept: the run ends on it (a handler answering
  // 5xx forever would otherwise read as lost_payment).
  ServiceReply call(std::string_view service, const ServiceRequest&) override {
    if (service_called_.empty()) service_called_ = service.empty() ? std::string("(unnamed)") : std::string(service);
    return {Status::error(std::string(service) + ": no external services in stress mode"), {}};
  }
  // The first service call() was asked for, "" when none.
  const std::string& service_called() const { return service_called_; }

  const Status& status() const { return db_->status(); }
  WorkerDb& worker_db() { return *db_; }
  // The reply respond_now() sent during the last delivery, if any; clears it for the next.
  std::optional<Reply> take_early_reply() { return std::exchange(early_reply_, std::nullopt); }

 private:
  std::unique_ptr<WorkerDb> db_;
  RealLocks& locks_;
  Clock& clock_;
  std::string token_prefix_;
  long tokens_ = 0;
  std::optional<Reply> early_reply_;
  std::string service_called_;
};

}  // namespace twice::stress
