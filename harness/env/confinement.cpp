#include "env/confinement.h"

#include <strings.h>

#include <array>

namespace twice::env {
namespace {

// Denied when given a value; reading them stays allowed.
constexpr std::array<const char*, 8> kDeniedPragmas = {
    "journal_mode",       "locking_mode",          "synchronous",         "journal_size_limit",
    "wal_autocheckpoint", "temp_store_directory",  "data_store_directory", "mmap_size",
};

// What leaves state in the connection (not the database) behind the statement:
// a fresh connection would not have it.
bool alters_connection(int action, const char* second) {
  switch (action) {
    case SQLITE_PRAGMA: return second != nullptr;
    case SQLITE_CREATE_TEMP_TABLE:
    case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_CREATE_TEMP_VIEW: return true;
    default: return false;
  }
}

int authorize(void* altered, int action, const char* first, const char* second, const char*, const char*) {
  if (altered && alters_connection(action, second)) *static_cast<bool*>(altered) = true;
  if (action == SQLITE_ATTACH || action == SQLITE_DETACH) return SQLITE_DENY;
  if (action == SQLITE_PRAGMA && first && second) {
    for (const char* name : kDeniedPragmas)
      if (::strcasecmp(first, name) == 0) return SQLITE_DENY;
  }
  return SQLITE_OK;
}

}  // namespace

void confine(sqlite3* conn, bool* altered) { sqlite3_set_authorizer(conn, authorize, altered); }

std::string prepare_error(sqlite3* conn) {
  std::string message = sqlite3_errmsg(conn);
  if (sqlite3_errcode(conn) == SQLITE_AUTH)
    message +=
        " (twice denies ATTACH, DETACH and PRAGMAs that change journaling or locking: a handler stays inside the "
        "run's database)";
  return message;
}

}  // namespace twice::env
