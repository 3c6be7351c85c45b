#include "engine/server_run.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

namespace twice::engine {
namespace {

// How long a statement may take before the server is asked whether it is
// blocked. A statement on a Unix socket answers in tens of microseconds.
constexpr int kSlowMs = 1;
// A statement neither answered nor blocked this long is a server in trouble.
constexpr double kGiveUpSeconds = 120;

}  // namespace

void ServerRun::closed(ServerSession* s) {
  open_.erase(std::remove(open_.begin(), open_.end(), s), open_.end());
  for (ServerSession* o : open_) {
    auto w = o->waits_for();
    w.erase(std::remove(w.begin(), w.end(), s), w.end());
    o->set_waits_for(std::move(w));
  }
}

bool ServerRun::must_queue(const ServerSession& s, const std::vector<const ServerSession*>& blockers) const {
  // A cycle back to `s`: a deadlock, which the server breaks by its own rule.
  std::vector<const ServerSession*> frontier(blockers.begin(), blockers.end());
  std::vector<const ServerSession*> seen;
  while (!frontier.empty()) {
    const ServerSession* b = frontier.back();
    frontier.pop_back();
    if (!b || std::find(seen.begin(), seen.end(), b) != seen.end()) continue;
    if (b == &s) return false;
    seen.push_back(b);
    if (b->waiting()) frontier.insert(frontier.end(), b->waits_for().begin(), b->waits_for().end());
  }
  for (const ServerSession* b : blockers)
    if (b && b->waiting()) return true;  // a chain of waits: its end may wake several at once
  for (const ServerSession* o : open_) {
    if (o == &s || !o->waiting()) continue;
    for (const ServerSession* b : blockers)
      if (b && std::find(o->waits_for().begin(), o->waits_for().end(), b) != o->waits_for().end()) return true;
  }
  return false;
}

bool ServerRun::any_waiting() const {
  return std::any_of(open_.begin(), open_.end(), [](const ServerSession* o) { return o->waiting(); });
}

void ServerRun::wake_queued() {
  for (ServerSession* o : open_)
    if (o->queued()) scheduler_.wake_db_waiter(o->task());
}

bool ServerRun::any_queued() const {
  return std::any_of(open_.begin(), open_.end(), [](const ServerSession* o) { return o->queued(); });
}

void ServerRun::wake_queued_for_deadlock() {
  for (ServerSession* o : open_) {
    if (!o->queued()) continue;
    o->forbid_queueing();
    scheduler_.wake_db_waiter(o->task());
  }
}

void ServerRun::settle(const ServerSession* except) {
  for (ServerSession* o : open_) {
    if (o == except || !o->in_flight()) continue;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      if (o->answer_arrived(0)) {
        o->set_waits_for({});
        scheduler_.wake_db_waiter(o->task());
        break;
      }
      if (auto b = blockers(*o); !b.empty()) {
        o->set_waits_for(std::move(b));
        break;
      }
      if (o->answer_arrived(kSlowMs)) {
        o->set_waits_for({});
        scheduler_.wake_db_waiter(o->task());
        break;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kGiveUpSeconds) break;
    }
  }
}

bool ServerRun::wait_for_any() {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<pollfd> fds;
    for (ServerSession* o : open_) {
      if (!o->in_flight()) continue;
      if (o->answer_arrived(0)) {
        o->set_waits_for({});
        scheduler_.wake_db_waiter(o->task());
        settle(o);
        wake_queued();
        return true;
      }
      fds.push_back(pollfd{o->socket(), POLLIN, 0});
    }
    if (fds.empty()) return true;
    ::poll(fds.data(), fds.size(), 100);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kGiveUpSeconds) return false;
  }
}

}  // namespace twice::engine
