#include "env/busy_rule.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace twice::env {

namespace {

BusyRule read_busy_rule() {
  const char* value = std::getenv("TWICE_SQLITE_BUSY");
  if (!value || !*value || std::string(value) == "sqlite") return BusyRule::kAsSqlite;
  if (std::string(value) == "victim") return BusyRule::kWaitThenVictim;
  throw std::invalid_argument("TWICE_SQLITE_BUSY='" + std::string(value) +
                              "' is not a rule; unset it (SQLite's own answers) or write TWICE_SQLITE_BUSY=victim "
                              "(the rule of twice 0.4: wait, then a drawn victim)");
}

}  // namespace

BusyRule busy_rule() {
  static const BusyRule rule = read_busy_rule();
  return rule;
}

}  // namespace twice::env
