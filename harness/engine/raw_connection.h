// RawConnection: a connection to a run's database outside any scheduling, on
// whichever engine: the run seeds through it and the checker reads through
// it. Statements run at once and completely; nothing yields. Not
// thread-safe: one user at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "twice/db.h"
#include "twice/engine.h"

namespace twice::engine {

class RawConnection {
 public:
  virtual ~RawConnection() = default;
  virtual Engine engine() const = 0;
  // One statement with positional parameters (? or ?N).
  virtual Result query(std::string_view sql, const std::vector<Value>& params = {}) = 0;
  // One or more statements without parameters (a schema's setup SQL).
  virtual Status exec_script(const std::string& sql) = 0;
};

}  // namespace twice::engine
