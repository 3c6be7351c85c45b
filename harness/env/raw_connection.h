// RawConnection: a connection to the run's database outside any scheduling,
// for what the harness itself reads and writes (seeding the run, the
// checker's oracle queries). Engine-neutral: SQLite's is SqliteConnection
// (env/sqlite_db.h). Used from one thread at a time.
#pragma once

#include <string_view>
#include <vector>

#include "twice/db.h"

namespace twice::env {

class RawConnection {
 public:
  virtual ~RawConnection() = default;
  // Runs one statement with positional parameters; all its rows.
  virtual Result query(std::string_view sql, const std::vector<Value>& params = {}) = 0;
};

}  // namespace twice::env
