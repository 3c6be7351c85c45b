// Db: the handler's SQL connection. One connection per task, all tasks of a run
// sharing one SQLite database (a file on tmpfs, with SQLite's own locking).
//
// Every statement is a scheduling point: before it runs, the scheduler may let
// any other task go first. A statement runs to completion atomically (all rows
// are stepped) once the task is resumed. When SQLite answers SQLITE_BUSY the
// task waits until another task ends its transaction and then retries; only
// when every task is waiting does the handler get a kBusy Status, as SQLite
// itself would answer in a deadlock. Not thread-safe: a Db belongs to one task.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "twice/engine.h"
#include "twice/status.h"

namespace twice {

// A bound parameter or a column value.
class Value {
 public:
  Value() = default;
  Value(std::nullptr_t) {}
  Value(int v) : v_(static_cast<std::int64_t>(v)) {}
  Value(long v) : v_(static_cast<std::int64_t>(v)) {}
  Value(long long v) : v_(static_cast<std::int64_t>(v)) {}
  Value(double v) : v_(v) {}
  Value(const char* v) : v_(std::string(v)) {}
  Value(std::string v) : v_(std::move(v)) {}
  Value(std::string_view v) : v_(std::string(v)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_integer() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_real() const { return std::holds_alternative<double>(v_); }
  bool is_text() const { return std::holds_alternative<std::string>(v_); }
  // Conversions are lenient, like SQLite's: NULL reads as 0 or "".
  std::int64_t as_int() const;
  double as_real() const;
  std::string as_text() const;
  // A text value's characters without a copy; empty for any other value.
  std::string_view text_view() const {
    const auto* s = std::get_if<std::string>(&v_);
    return s ? std::string_view(*s) : std::string_view();
  }
  // SQL-literal form for traces: NULL, 42, 'it''s'.
  std::string to_sql() const;

  bool operator==(const Value&) const = default;

 private:
  std::variant<std::monostate, std::int64_t, double, std::string> v_;
};

using Row = std::vector<Value>;

struct Result {
  Status status;
  std::vector<std::string> columns;
  std::vector<Row> rows;
  // Rows an INSERT/UPDATE/DELETE matched, on every engine: an UPDATE that
  // sets a column to the value it already holds counts (SQLite's
  // sqlite3_changes, PostgreSQL's command tag, MySQL with CLIENT_FOUND_ROWS).
  // 0 for statements that return rows.
  std::int64_t changes = 0;
  std::int64_t last_insert_id = 0;  // SQLite only (its rowid); 0 on server engines

  bool ok() const { return status.ok(); }
  bool empty() const { return rows.empty(); }
  // The column called `name` of row `row`; a null Value when there is none.
  const Value& at(std::size_t row, std::string_view name) const;
};

enum class TxMode { kDeferred, kImmediate };

class Transaction;

class Db {
 public:
  virtual ~Db() = default;
  // Runs one statement with positional parameters (?1, ?2 or ?).
  virtual Result exec(std::string_view sql, std::initializer_list<Value> params = {}) = 0;
  virtual Result exec(std::string_view sql, const std::vector<Value>& params) = 0;
  // Which engine runs the statements, for the few places where SQL differs.
  virtual Engine engine() const { return Engine::kSqlite; }

  // BEGIN DEFERRED / BEGIN IMMEDIATE on SQLite, BEGIN on a server engine (at
  // the connection's isolation level); the Transaction rolls back on
  // destruction unless commit() succeeded.
  Transaction begin(TxMode mode = TxMode::kDeferred);
};

class Transaction {
 public:
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  // The outcome of BEGIN; a transaction that did not begin does nothing.
  const Status& status() const { return begin_; }
  bool ok() const { return begin_.ok(); }
  // COMMIT. On failure the transaction is rolled back.
  Status commit();
  Status rollback();

 private:
  friend class Db;
  Transaction(Db* db, Status begin) : db_(db), begin_(std::move(begin)) {}
  Db* db_;
  Status begin_;
  bool open_ = true;
};

}  // namespace twice
