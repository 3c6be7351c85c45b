#include "env/busy_rule.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace twice::env {

namespace {

BusyRule read_busy_rule() {
  const char* value = std::getenv("TWICE_SQLITE_BUSY");
  if (!value || !*value) return BusyRule::kWaitThenVictim;
  if (std::string(value) == "sqlite") return BusyRule::kAsSqlite;
  throw std::invalid_argument("TWICE_SQLITE_BUSY='" + std::string(value) +
                              "' is not a rule; unset it (wait, then a victim) or write TWICE_SQLITE_BUSY=sqlite");
}

}  // namespace

BusyRule busy_rule() {
  static const BusyRule rule = read_busy_rule();
  return rule;
}

}  // namespace twice::env
