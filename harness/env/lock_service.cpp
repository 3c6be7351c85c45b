#include "env/lock_service.h"

#include <fmt/format.h>

namespace twice::env {

LockService::Entry* LockService::live(std::string_view key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  if (it->second.expires_at <= scheduler_.now()) {
    entries_.erase(it);
    return nullptr;
  }
  return &it->second;
}

bool LockService::set_if_absent(std::string_view key, std::string_view owner, Micros ttl) {
  if (live(key)) return false;
  entries_[std::string(key)] = Entry{std::string(owner), scheduler_.now() + ttl};
  return true;
}

std::optional<std::string> LockService::get(std::string_view key) {
  if (Entry* e = live(key)) return e->owner;
  return std::nullopt;
}

bool LockService::del(std::string_view key) {
  if (!live(key)) return false;
  entries_.erase(entries_.find(key));
  return true;
}

bool LockService::compare_and_delete(std::string_view key, std::string_view owner) {
  Entry* e = live(key);
  if (!e || e->owner != owner) return false;
  entries_.erase(entries_.find(key));
  return true;
}

bool TaskLocks::set_if_absent(std::string_view key, std::string_view owner, Micros ttl) {
  std::string text = fmt::format("SET {} {} NX PX {}", key, owner, ttl / kMillisecond);
  if (!scheduler_.point(text)) return false;
  const bool ok = service_.set_if_absent(key, owner, ttl);
  scheduler_.record(sim::EventKind::kLock, std::move(text), ok ? "OK" : "nil (held)");
  return ok;
}

std::optional<std::string> TaskLocks::get(std::string_view key) {
  if (!scheduler_.point(fmt::format("GET {}", key))) return std::nullopt;
  auto owner = service_.get(key);
  scheduler_.record(sim::EventKind::kLock, fmt::format("GET {}", key), owner ? *owner : "nil");
  return owner;
}

bool TaskLocks::del(std::string_view key) {
  if (!scheduler_.point(fmt::format("DEL {}", key))) return false;
  const bool ok = service_.del(key);
  scheduler_.record(sim::EventKind::kLock, fmt::format("DEL {}", key), ok ? "1" : "0");
  return ok;
}

bool TaskLocks::compare_and_delete(std::string_view key, std::string_view owner) {
  if (!scheduler_.point(fmt::format("DEL {} IF OWNER {}", key, owner))) return false;
  const bool ok = service_.compare_and_delete(key, owner);
  scheduler_.record(sim::EventKind::kLock, fmt::format("DEL {} IF OWNER {}", key, owner), ok ? "1" : "0 (not owner)");
  return ok;
}

}  // namespace twice::env
