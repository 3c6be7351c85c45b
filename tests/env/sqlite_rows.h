// sqlite_rows(): a statement's rows as text, for the tests that run the same
// random statements on two VFSes and compare what each answered
// (lock_ledger_test.cpp, held_file_test.cpp).
#pragma once

#include <string>

#include <sqlite3.h>

namespace twice::env::testing {

// Every column of every row, "v;" each (NULL as "null"); `rc` is the code of
// the prepare that failed, else of the last step (SQLITE_DONE when it ran to
// the end).
inline std::string sqlite_rows(sqlite3* c, const char* sql, int& rc) {
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(c, sql, -1, &stmt, nullptr);
  std::string rows;
  if (rc != SQLITE_OK) return rows;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const unsigned char* text = sqlite3_column_text(stmt, i);
      rows += text ? reinterpret_cast<const char*>(text) : "null";
      rows += ';';
    }
  sqlite3_finalize(stmt);
  return rows;
}

}  // namespace twice::env::testing
