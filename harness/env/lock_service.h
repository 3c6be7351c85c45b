// LockService: the run's Redis-like lock store, and the per-task Locks view of
// it. Entries carry an owner token and expire on the virtual clock. Every
// operation through TaskLocks is a scheduling point and a trace line.
#pragma once

#include <map>
#include <string>

#include "sim/scheduler.h"
#include "twice/locks.h"

namespace twice::env {

class LockService {
 public:
  explicit LockService(sim::Scheduler& scheduler) : scheduler_(scheduler) {}
  bool set_if_absent(std::string_view key, std::string_view owner, Micros ttl);
  std::optional<std::string> get(std::string_view key);
  bool del(std::string_view key);
  bool compare_and_delete(std::string_view key, std::string_view owner);

 private:
  struct Entry {
    std::string owner;
    Micros expires_at;
  };
  // Drops `key` if its TTL has passed; returns the live entry or nullptr.
  Entry* live(std::string_view key);

  sim::Scheduler& scheduler_;
  std::map<std::string, Entry, std::less<>> entries_;
};

class TaskLocks final : public Locks {
 public:
  TaskLocks(sim::Scheduler& scheduler, LockService& service) : scheduler_(scheduler), service_(service) {}
  bool set_if_absent(std::string_view key, std::string_view owner, Micros ttl) override;
  std::optional<std::string> get(std::string_view key) override;
  bool del(std::string_view key) override;
  bool compare_and_delete(std::string_view key, std::string_view owner) override;

 private:
  sim::Scheduler& scheduler_;
  LockService& service_;
};

}  // namespace twice::env
