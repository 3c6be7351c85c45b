#include "env/sqlite_settings.h"

#include <mutex>

#include <sqlite3.h>

namespace twice::env {

void apply_sqlite_settings() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace twice::env
