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
  std::string text = scheduler_.tracing() ? fmt::format("SET {} {} NX PX {}", key, owner, ttl / kMillisecond) : "";
  if (!scheduler_.point(text)) return false;
  const bool ok = service_.set_if_absent(key, owner, ttl);
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kLock, std::move(text), ok ? "OK" : "nil (held)");
  return ok;
}

std::optional<std::string> TaskLocks::get(std::string_view key) {
  std::string text = scheduler_.tracing() ? fmt::format("GET {}", key) : "";
  if (!scheduler_.point(text)) return std::nullopt;
  auto owner = service_.get(key);
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kLock, std::move(text), owner ? *owner : "nil");
  return owner;
}

bool TaskLocks::del(std::string_view key) {
  std::string text = scheduler_.tracing() ? fmt::format("DEL {}", key) : "";
  if (!scheduler_.point(text)) return false;
  const bool ok = service_.del(key);
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kLock, std::move(text), ok ? "1" : "0");
  return ok;
}

bool TaskLocks::compare_and_delete(std::string_view key, std::string_view owner) {
  std::string text = scheduler_.tracing() ? fmt::format("DEL {} IF OWNER {}", key, owner) : "";
  if (!scheduler_.point(text)) return false;
  const bool ok = service_.compare_and_delete(key, owner);
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kLock, std::move(text), ok ? "1" : "0 (not owner)");
  return ok;
}

}  // namespace twice::env
