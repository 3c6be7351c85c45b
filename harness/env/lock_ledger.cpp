#include "env/lock_ledger.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "env/held_file.h"

namespace twice::env {

// The locks on one file: how many of its handles hold each level (SQLite keeps
// one unixInodeInfo per inode; a run's file has one name).
struct FileLocks {
  int holders[SQLITE_LOCK_EXCLUSIVE + 1] = {};
  int handles = 0;
};

// A main database file's handle: the ledger's entry, then unix's own handle.
struct LedgerFile {
  sqlite3_file base;  // its pMethods are the ledger's, forwarding to unix's
  FileLocks* locks;
  int level;    // the lock this handle holds, as unix keeps it
  int refused;  // the level xLock last refused, SQLITE_LOCK_NONE once taken
  std::shared_ptr<HeldBytes> memory;  // the file's bytes when it is held (env/held_file.h)
};

namespace {

constexpr std::size_t kHeader = (sizeof(LedgerFile) + 15) & ~std::size_t{15};

sqlite3_file* real(sqlite3_file* file) {
  return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kHeader);
}
LedgerFile& entry(sqlite3_file* file) { return *reinterpret_cast<LedgerFile*>(file); }

struct LedgerFiles {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<FileLocks>, std::less<>> files;
};
LedgerFiles& ledger_files() {
  static LedgerFiles* instance = new LedgerFiles;  // never destroyed: a connection may close during exit
  return *instance;
}

FileLocks* attach(const std::string& name) {
  LedgerFiles& t = ledger_files();
  std::lock_guard lock(t.mutex);
  auto& locks = t.files[name];
  if (!locks) locks = std::make_unique<FileLocks>();
  ++locks->handles;
  ++locks->holders[SQLITE_LOCK_NONE];
  return locks.get();
}

void detach(LedgerFile& f) {
  LedgerFiles& t = ledger_files();
  std::lock_guard lock(t.mutex);
  --f.locks->holders[f.level];
  sim::note_lock_change();
  if (--f.locks->handles > 0) return;
  for (auto it = t.files.begin(); it != t.files.end(); ++it)
    if (it->second.get() == f.locks) {
      t.files.erase(it);
      break;
    }
}

void set_level(LedgerFile& f, int level) {
  --f.locks->holders[f.level];
  ++f.locks->holders[level];
  f.level = level;
  sim::note_lock_change();  // a parked task's grantable() may answer otherwise now
}

// The strongest lock another handle of the file holds.
int others_strongest(const LedgerFile& f) {
  for (int level = SQLITE_LOCK_EXCLUSIVE; level > SQLITE_LOCK_NONE; --level)
    if (f.locks->holders[level] - (f.level == level ? 1 : 0) > 0) return level;
  return SQLITE_LOCK_NONE;
}

// How many other handles hold SHARED or more.
int others_sharing(const LedgerFile& f) {
  int n = 0;
  for (int level = SQLITE_LOCK_SHARED; level <= SQLITE_LOCK_EXCLUSIVE; ++level) n += f.locks->holders[level];
  return n - (f.level >= SQLITE_LOCK_SHARED ? 1 : 0);
}

int x_close(sqlite3_file* file) {
  sqlite3_file* r = real(file);
  const int rc = r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
  detach(entry(file));
  entry(file).memory.reset();
  return rc;
}

// A held file's bytes answer as unix's pread, pwrite, ftruncate and fstat would.
int x_read(sqlite3_file* file, void* buf, int n, sqlite3_int64 offset) {
  HeldBytes* held = entry(file).memory.get();
  if (!held) return real(file)->pMethods->xRead(real(file), buf, n, offset);
  const auto size = static_cast<sqlite3_int64>(held->bytes().size());
  const int got = offset >= size ? 0 : static_cast<int>(std::min<sqlite3_int64>(n, size - offset));
  if (got > 0) std::memcpy(buf, held->bytes().data() + offset, static_cast<std::size_t>(got));
  if (got == n) return SQLITE_OK;
  std::memset(static_cast<char*>(buf) + got, 0, static_cast<std::size_t>(n - got));  // as unixRead
  return SQLITE_IOERR_SHORT_READ;
}
int x_write(sqlite3_file* file, const void* buf, int n, sqlite3_int64 offset) {
  HeldBytes* held = entry(file).memory.get();
  if (!held) return real(file)->pMethods->xWrite(real(file), buf, n, offset);
  held->write(static_cast<std::size_t>(offset), buf, static_cast<std::size_t>(n));
  return SQLITE_OK;
}
int x_truncate(sqlite3_file* file, sqlite3_int64 size) {
  HeldBytes* held = entry(file).memory.get();
  if (!held) return real(file)->pMethods->xTruncate(real(file), size);
  held->resize(static_cast<std::size_t>(size));
  return SQLITE_OK;
}
int x_sync(sqlite3_file* file, int flags) {
  if (entry(file).memory) return SQLITE_OK;  // nothing to make durable
  return real(file)->pMethods->xSync(real(file), flags);
}
int x_file_size(sqlite3_file* file, sqlite3_int64* size) {
  HeldBytes* held = entry(file).memory.get();
  if (!held) return real(file)->pMethods->xFileSize(real(file), size);
  *size = static_cast<sqlite3_int64>(held->bytes().size());
  if (*size == 1) *size = 0;  // unixFileSize's own rule (a byte it may write into an empty file)
  return SQLITE_OK;
}

// unixLock (os_unix.c, SQLite 3.40) over the ledger, without the kernel.
// Between the handles of one process unix decides from its own table
// (unixInodeInfo: the file's strongest lock and how many hold SHARED) and
// only then asks fcntl, which never refuses a process its own locks; no
// other process opens a run's file. So its answers are these, step for step,
// and the fcntl calls (4.9 million in the main job: three per first SHARED,
// one per release, more per write) only cost system time.
int x_lock(sqlite3_file* file, int level) {
  LedgerFile& f = entry(file);
  if (f.level >= level) return SQLITE_OK;
  const int strongest = std::max(f.level, others_strongest(f));
  const auto refuse = [&] {
    f.refused = level;
    return SQLITE_BUSY;
  };
  // Another handle holds a lock that precludes this one.
  if (f.level != strongest && (strongest >= SQLITE_LOCK_PENDING || level > SQLITE_LOCK_SHARED)) return refuse();
  if (level == SQLITE_LOCK_EXCLUSIVE) {
    // PENDING first, kept when the readers refuse EXCLUSIVE: new readers wait.
    if (f.level < SQLITE_LOCK_PENDING) set_level(f, SQLITE_LOCK_PENDING);
    if (others_sharing(f) > 0) return refuse();
  }
  set_level(f, level);
  return SQLITE_OK;
}

// unixUnlock: lowering a lock always succeeds.
int x_unlock(sqlite3_file* file, int level) {
  LedgerFile& f = entry(file);
  if (level < f.level) set_level(f, level);
  return SQLITE_OK;
}

// unixCheckReservedLock: some handle holds RESERVED or more (no other process can).
int x_check_reserved(sqlite3_file* file, int* out) {
  const LedgerFile& f = entry(file);
  *out = std::max(f.level, others_strongest(f)) > SQLITE_LOCK_SHARED ? 1 : 0;
  return SQLITE_OK;
}
int x_file_control(sqlite3_file* file, int op, void* arg) {
  return real(file)->pMethods->xFileControl(real(file), op, arg);
}
int x_sector_size(sqlite3_file* file) { return real(file)->pMethods->xSectorSize(real(file)); }
int x_device(sqlite3_file* file) { return real(file)->pMethods->xDeviceCharacteristics(real(file)); }
int x_shm_map(sqlite3_file* file, int page, int size, int extend, void volatile** out) {
  sqlite3_file* r = real(file);
  return r->pMethods->iVersion >= 2 && r->pMethods->xShmMap ? r->pMethods->xShmMap(r, page, size, extend, out)
                                                            : SQLITE_IOERR_SHMMAP;
}
int x_shm_lock(sqlite3_file* file, int offset, int n, int flags) {
  sqlite3_file* r = real(file);
  return r->pMethods->iVersion >= 2 && r->pMethods->xShmLock ? r->pMethods->xShmLock(r, offset, n, flags)
                                                             : SQLITE_IOERR_SHMLOCK;
}
void x_shm_barrier(sqlite3_file* file) {
  sqlite3_file* r = real(file);
  if (r->pMethods->iVersion >= 2 && r->pMethods->xShmBarrier) r->pMethods->xShmBarrier(r);
}
int x_shm_unmap(sqlite3_file* file, int remove) {
  sqlite3_file* r = real(file);
  return r->pMethods->iVersion >= 2 && r->pMethods->xShmUnmap ? r->pMethods->xShmUnmap(r, remove) : SQLITE_OK;
}
int x_fetch(sqlite3_file* file, sqlite3_int64 offset, int n, void** out) {
  sqlite3_file* r = real(file);
  // A held file is never mapped: the file on disk is not its content.
  if (!entry(file).memory && r->pMethods->iVersion >= 3 && r->pMethods->xFetch) return r->pMethods->xFetch(r, offset, n, out);
  *out = nullptr;
  return SQLITE_OK;
}
int x_unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  sqlite3_file* r = real(file);
  return r->pMethods->iVersion >= 3 && r->pMethods->xUnfetch ? r->pMethods->xUnfetch(r, offset, page) : SQLITE_OK;
}

const sqlite3_io_methods kMethods = {
    3,          x_close,        x_read,   x_write,   x_truncate,  x_sync,        x_file_size,
    x_lock,     x_unlock,       x_check_reserved,    x_file_control, x_sector_size, x_device,
    x_shm_map,  x_shm_lock,     x_shm_barrier,       x_shm_unmap, x_fetch,       x_unfetch,
};

LedgerFile* ledger_of(sqlite3* conn) {
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(conn, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file ||
      file->pMethods != &kMethods)
    return nullptr;
  return &entry(file);
}

}  // namespace

int ledger_file_size(int unix_size) { return static_cast<int>(kHeader) + unix_size; }

int ledger_open(sqlite3_vfs* unix_vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = new (file) LedgerFile{};
  f->base.pMethods = nullptr;  // until unix's file is open: SQLite closes nothing on failure
  sqlite3_file* r = real(file);
  r->pMethods = nullptr;
  const int rc = unix_vfs->xOpen(unix_vfs, name, r, flags, out_flags);
  if (rc != SQLITE_OK) {
    if (r->pMethods) r->pMethods->xClose(r);
    return rc;
  }
  f->locks = attach(name ? name : "");
  f->level = SQLITE_LOCK_NONE;
  f->refused = SQLITE_LOCK_NONE;
  f->memory = name ? held_in_memory(name) : nullptr;
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}

std::optional<RefusedLock> RefusedLock::take(sqlite3* conn) {
  LedgerFile* f = ledger_of(conn);
  if (!f || f->refused == SQLITE_LOCK_NONE) return std::nullopt;
  const int level = f->refused;
  f->refused = SQLITE_LOCK_NONE;
  return RefusedLock(f, level);
}

bool RefusedLock::grantable() const {
  const LedgerFile& f = *file_;
  const int others = others_strongest(f);
  // The retry climbs from the lock held now through each level to the refused one.
  if (level_ >= SQLITE_LOCK_SHARED && f.level < SQLITE_LOCK_SHARED && others >= SQLITE_LOCK_PENDING) return false;
  if (level_ >= SQLITE_LOCK_RESERVED && f.level < SQLITE_LOCK_RESERVED && others >= SQLITE_LOCK_RESERVED) return false;
  if (level_ == SQLITE_LOCK_EXCLUSIVE && f.level < SQLITE_LOCK_EXCLUSIVE && others_sharing(f) > 0) return false;
  return true;
}

sim::LockWaitKey RefusedLock::key() const { return {file_->locks, file_->level, level_}; }

int held_lock(sqlite3* conn) {
  const LedgerFile* f = ledger_of(conn);
  return f ? f->level : -1;
}

std::optional<bool> shared_grantable(sqlite3* conn) {
  const LedgerFile* f = ledger_of(conn);
  if (!f) return std::nullopt;
  return f->level >= SQLITE_LOCK_SHARED || others_strongest(*f) < SQLITE_LOCK_PENDING;
}

}  // namespace twice::env
