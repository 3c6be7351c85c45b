// HeldFile: the bytes of a run's database file, kept in this process's memory
// and read and written there by every connection opened on that file through
// the twice-unix VFS (env/journal_vfs.h), instead of through the kernel.
//
// Why: a run's file is read and written only by connections of the process
// that made it (its name is fresh per process), yet each read of a page after
// another connection's commit was a pread, each write a pwrite, each look at
// the size an fstat: 4.1 million system calls in the main job (issue #12).
// SQLite cannot tell: the same bytes answer the same offsets, a read past the
// end is short and zero-filled as unix's, and the locks are the lock ledger's
// either way (env/lock_ledger.h). The file on disk stays (its name keeps the
// path taken, and unix's own handle answers the sector size and device
// characteristics as before) but holds the bytes it was created with only;
// what reads a held file must go through twice-unix.
// Only a file hold_in_memory() was called for is held: any other file opened through
// twice-unix (a benchmark's, a test's, a seeding scratch file) stays unix's.
//
// A held file also knows which of its chunks were written since it was last
// restored, so that restore() puts an image back by copying those chunks
// only: a run writes a few pages of a file of fourteen, and copying the
// whole image was a sixth of a schedule's instructions (issue #12).
//
// Threads: the table of held files has a mutex; a file's bytes are read and
// written by the thread using its connections (a run's own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace twice::env {

class HeldBytes {
 public:
  explicit HeldBytes(std::string bytes) : bytes_(std::move(bytes)) {}

  const std::string& bytes() const { return bytes_; }

  // As pwrite: a write past the end grows the file, a gap reads as zeros.
  void write(std::size_t offset, const void* data, std::size_t n);
  // As ftruncate: shorter cuts, longer adds zeros.
  void resize(std::size_t size);

  // The bytes become `image`, copying every byte (the chunks' record starts
  // over: `image` is the content restore() will compare against).
  void assign(std::string_view image);
  // The bytes become `image` again, copying only the chunks written or
  // resized since the last assign() or restore(). `image` must be what they
  // were then, byte for byte: a caller that changes the image calls assign().
  void restore(std::string_view image);

 private:
  static constexpr std::size_t kChunk = 4096;  // any size restores exactly; a page is the usual write
  void mark(std::size_t from, std::size_t to);  // bytes [from, to) may differ from the image

  std::string bytes_;
  std::vector<std::uint8_t> dirty_;  // per chunk: 1 when it may differ from the image
  std::size_t first_dirty_ = SIZE_MAX, last_dirty_ = 0;  // the dirty chunks' span, to skip the clean rest
};

// From now on `path` (as SQLite names it to the VFS: the path opened) is held
// with `bytes` as its content; connections opened on it before are not.
// Returns the held bytes (what held_in_memory(path) returns from now on).
// Its bytes are only written through HeldBytes, so that restore() knows what changed.
std::shared_ptr<HeldBytes> hold_in_memory(const std::string& path, std::string bytes);
// The held content of `path`, or null when it is not held.
std::shared_ptr<HeldBytes> held_in_memory(const std::string& path);
// `path` is no longer held (its file is being removed).
void stop_holding(const std::string& path);

}  // namespace twice::env
