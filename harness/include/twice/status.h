// Status: the outcome of an operation a handler asked of its Env.
//
// Errors cross module boundaries as values, never as exceptions (the one
// exception is the scheduler's own unwinding of a crashed or stuck task, which
// handlers never see as a Status). A Status is cheap to copy and immutable.
#pragma once

#include <string>
#include <utility>

namespace twice {

class Status {
 public:
  enum class Code {
    kOk,
    kConstraint,  // a UNIQUE / CHECK / NOT NULL / FOREIGN KEY constraint failed
    kBusy,        // the database stayed locked: every task was waiting (deadlock)
    kError,       // any other SQL error (syntax, missing table, misuse)
    kCrashed,     // the process is going down; nothing more will run
    // Server engines only (PostgreSQL, MariaDB); each is worth retrying the
    // WHOLE transaction for, after its ROLLBACK:
    kSerialization,  // SQLSTATE 40001 / MySQL 1020 (innodb_snapshot_isolation): the transaction could not be serialized
    kDeadlock,       // SQLSTATE 40P01 / MySQL 1213: the engine chose this transaction as a deadlock victim
    kLockTimeout,    // SQLSTATE 55P03 / MySQL 1205: a lock wait outlasted lock_timeout
  };

  // LevelDB's convention: Status::OK() makes one, status.ok() tests one.
  Status() = default;
  static Status OK() { return Status(); }
  static Status constraint(std::string msg) { return Status(Code::kConstraint, std::move(msg)); }
  static Status busy(std::string msg) { return Status(Code::kBusy, std::move(msg)); }
  static Status error(std::string msg) { return Status(Code::kError, std::move(msg)); }
  static Status crashed() { return Status(Code::kCrashed, "process crashed"); }
  static Status serialization(std::string msg) { return Status(Code::kSerialization, std::move(msg)); }
  static Status deadlock(std::string msg) { return Status(Code::kDeadlock, std::move(msg)); }
  static Status lock_timeout(std::string msg) { return Status(Code::kLockTimeout, std::move(msg)); }

  // The one spelling of "did it work". The two below are kept for handlers
  // written against API version 2 and warn when used.
  bool ok() const { return code_ == Code::kOk; }
  [[deprecated("write status.ok()")]] bool is_ok() const { return ok(); }
  bool is_constraint() const { return code_ == Code::kConstraint; }
  bool is_busy() const { return code_ == Code::kBusy; }
  bool is_crashed() const { return code_ == Code::kCrashed; }
  bool is_serialization() const { return code_ == Code::kSerialization; }
  bool is_deadlock() const { return code_ == Code::kDeadlock; }
  bool is_lock_timeout() const { return code_ == Code::kLockTimeout; }
  // The transaction lost a race the engine refereed (serialization failure,
  // deadlock victim, lock timeout, SQLite's busy deadlock): rolling back and
  // running the whole transaction again may succeed.
  bool is_retryable() const { return is_serialization() || is_deadlock() || is_lock_timeout() || is_busy(); }
  [[deprecated("write status.ok()")]] explicit operator bool() const { return ok(); }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK", "CONSTRAINT: UNIQUE constraint failed: callback_log.out_trade_no", ...
  std::string to_string() const;

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace twice
