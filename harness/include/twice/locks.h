// Locks: a Redis-like lock service shared by every task of a run (the
// `SET key owner NX PX ttl` family). Entries expire on the virtual clock, so a
// holder paused past its TTL loses the lock exactly as with a real Redis. Every
// operation is a scheduling point. Not thread-safe: call it from the task.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "twice/time.h"

namespace twice {

class Locks {
 public:
  virtual ~Locks() = default;
  // SET key owner NX PX ttl: true when the key was absent (or expired) and is now held by owner.
  virtual bool set_if_absent(std::string_view key, std::string_view owner, Micros ttl) = 0;
  // GET key: the owner, or nullopt when absent or expired.
  virtual std::optional<std::string> get(std::string_view key) = 0;
  // DEL key: true when a live entry was removed, whoever held it.
  virtual bool del(std::string_view key) = 0;
  // The compare-and-delete script: removes the key only if owner still holds it.
  virtual bool compare_and_delete(std::string_view key, std::string_view owner) = 0;
};

}  // namespace twice
