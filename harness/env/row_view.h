// RowView: one row of a query's answer, read where it lies (a SQLite
// statement being stepped, or a Row of a Result) instead of copied into a
// Result's Values first. The checker reads its oracle queries this way at
// every run: building a Result (a vector of column names, a vector per row,
// a string per text value) cost a third of its instructions (issue #12).
//
// text() and integer() convert exactly as Value::as_text() and
// Value::as_int() convert the Value the row would have held, so a reader sees
// what it saw in a Result. A RowView and the views its text() returns are
// valid only during the call it is handed to. Used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "twice/db.h"

namespace twice::env {

class RowView {
 public:
  virtual ~RowView() = default;
  virtual std::size_t size() const = 0;
  // Column `c` (< size()) as Value::as_text() reads it.
  virtual std::string_view text(std::size_t c) const = 0;
  // Column `c` (< size()) as Value::as_int() reads it.
  virtual std::int64_t integer(std::size_t c) const = 0;
};

// Receives row after row of query number `query` of a batch.
using RowSink = std::function<void(std::size_t query, const RowView& row)>;

// A RowView over a Row of Values: what a RawConnection that answers with
// Results hands on.
class ValueRowView final : public RowView {
 public:
  explicit ValueRowView(const Row& row) : row_(row) {}
  std::size_t size() const override { return row_.size(); }
  // A copy per column read: Value keeps its string to itself.
  std::string_view text(std::size_t c) const override {
    if (scratch_.size() < row_.size()) scratch_.resize(row_.size());
    scratch_[c] = row_[c].as_text();
    return scratch_[c];
  }
  std::int64_t integer(std::size_t c) const override { return row_[c].as_int(); }

 private:
  const Row& row_;
  mutable std::vector<std::string> scratch_;
};

}  // namespace twice::env
