#include "env/journal_vfs.h"

#include "env/lock_ledger.h"
#include "env/sqlite_settings.h"

#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>

#include <sqlite3.h>

namespace twice::env {
namespace {

constexpr const char* kName = "twice-unix";

struct Record {
  std::mutex mutex;
  std::set<std::string, std::less<>> existing;  // journal and WAL files created and not deleted
};

Record& record() {
  static Record instance;
  return instance;
}

sqlite3_vfs* unix_vfs(sqlite3_vfs* self) { return static_cast<sqlite3_vfs*>(self->pAppData); }

bool is_side_file(std::string_view name) { return name.ends_with("-journal") || name.ends_with("-wal"); }

int open(sqlite3_vfs* self, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  sqlite3_vfs* base = unix_vfs(self);
  // A database file's locks are kept in the ledger (env/lock_ledger.h).
  const int rc = (flags & SQLITE_OPEN_MAIN_DB) ? ledger_open(base, name, file, flags, out_flags)
                                               : base->xOpen(base, name, file, flags, out_flags);
  if (rc == SQLITE_OK && name && (flags & (SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL))) {
    Record& r = record();
    std::lock_guard lock(r.mutex);
    r.existing.emplace(name);
  }
  return rc;
}

int remove(sqlite3_vfs* self, const char* name, int sync_dir) {
  sqlite3_vfs* base = unix_vfs(self);
  const int rc = base->xDelete(base, name, sync_dir);
  Record& r = record();
  std::lock_guard lock(r.mutex);
  if (auto it = r.existing.find(std::string_view(name)); it != r.existing.end()) r.existing.erase(it);
  return rc;
}

int access(sqlite3_vfs* self, const char* name, int flags, int* result) {
  if (flags == SQLITE_ACCESS_EXISTS && is_side_file(name)) {
    Record& r = record();
    std::lock_guard lock(r.mutex);
    *result = r.existing.count(std::string_view(name)) ? 1 : 0;
    return SQLITE_OK;
  }
  sqlite3_vfs* base = unix_vfs(self);
  return base->xAccess(base, name, flags, result);
}

sqlite3_vfs* make() {
  apply_sqlite_settings();  // before sqlite3_vfs_find() initializes SQLite
  sqlite3_vfs* base = sqlite3_vfs_find("unix");
  if (!base) throw std::runtime_error("SQLite has no unix VFS");
  static sqlite3_vfs vfs = *base;  // every other method is unix's own
  vfs.zName = kName;
  vfs.pAppData = base;
  vfs.pNext = nullptr;
  vfs.szOsFile = ledger_file_size(base->szOsFile);
  vfs.xOpen = open;
  vfs.xDelete = remove;
  vfs.xAccess = access;
  if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) throw std::runtime_error("cannot register SQLite's twice-unix VFS");
  return &vfs;
}

}  // namespace

const char* journal_vfs() {
  static sqlite3_vfs* vfs = make();
  return vfs->zName;
}

void forget_journals(const std::string& path) {
  Record& r = record();
  std::lock_guard lock(r.mutex);
  r.existing.erase(path + "-journal");
  r.existing.erase(path + "-wal");
}

}  // namespace twice::env
