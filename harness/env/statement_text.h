// How a statement and its outcome read in a trace, on every engine: the SQL
// with its bound values inlined, and "1 row (balance=100)" / "2 rows changed"
// / "CONSTRAINT: ...". Pure functions; safe from any thread.
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "twice/db.h"

namespace twice::env {

// Each ? replaced by its bound value as an SQL literal (string literals in
// the statement are left alone); long values are cut.
std::string describe(std::string_view sql, std::span<const Value> params);
inline std::string describe(std::string_view sql, std::initializer_list<Value> params) {
  return describe(sql, std::span<const Value>(params.begin(), params.size()));
}
std::string summarize(std::string_view sql, const Result& r);

}  // namespace twice::env
