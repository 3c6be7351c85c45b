#include "engine/server_run.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "engine/sql_words.h"
#include "engine/statement_patience.h"
#include "env/statement_text.h"

namespace twice::engine {
namespace {

// How long a statement may take before the server is asked whether it is
// blocked: StatementPatience::first_us(), learned (statement_patience.h). A
// statement the server says is not blocked, merely slow (on a loaded
// machine, waiting for a core), is asked about again after twice as long
// each time, up to this: every question is a round trip that loads the
// machine further.
constexpr int kSlowestUs = 32'000;

double micros_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}
// A statement neither answered nor blocked this long is a server in trouble.
constexpr double kGiveUpSeconds = 120;

}  // namespace

ServerSession::ServerSession(ServerRun& run)
    : server_run_(run), scheduler_(run.scheduler()), task_(run.scheduler().current()) {}

Result ServerSession::execute(std::string_view sql, const std::vector<Value>& params) {
  const bool tracing = scheduler_.tracing();
  const std::string text = tracing ? env::describe(sql, params) : std::string();
  if (!scheduler_.point(text)) {
    Result r;
    r.status = Status::crashed();
    return r;
  }
  auto failed = [&](Status s) {
    Result r;
    r.status = std::move(s);
    if (tracing) scheduler_.record(sim::TraceKind::kSql, text, env::summarize(sql, r));
    return r;
  };
  if (!broken_.ok()) return failed(broken_);
  if (Status s = prepare_statement(sql, params); !s.ok()) return failed(s);

  bool told_waiting = false;
  for (;;) {
    // A statement that may have to be cancelled must not take its
    // transaction down with it: a savepoint first, when another one waits.
    // Never around transaction control: RELEASE of an earlier savepoint
    // would release ours too, and these do not wait for row locks.
    const bool savepoint = can_take_savepoint() && !is_transaction_control(sql) && server_run_.any_waiting();
    // Cancelling is safe with that savepoint, or for an autocommit statement.
    const bool cancellable = savepoint || outside_transaction();
    if (savepoint) {
      if (Status s = run_now("SAVEPOINT twice_statement"); !s.ok()) return failed(s);
    }
    // A statement that may publish writes: its watch reads what is committed
    // as it is sent (a commit of another session that this one then waits
    // for counts as before it: on a server engine there is no step between).
    if (env::CommitWatch* watch = commit_watch();
        watch && (is_word(sql, "COMMIT") || is_word(sql, "END") || outside_transaction()))
      watch->before_publish();
    if (Status s = send(); !s.ok()) return failed(s);
    const auto sent = std::chrono::steady_clock::now();
    bool blocked = false;  // found blocked at least once: its time says nothing about the machine
    bool requeue = false;
    int patience_us = StatementPatience::first_us();
    for (;;) {
      if (answer_arrived(patience_us)) {
        if (!blocked) StatementPatience::answered_unblocked(micros_since(sent));
        break;
      }
      if (!server_run_.others_may_hold_locks(*this)) {
        // No other session of the run has a transaction open or a statement
        // in flight: nothing it waits for can be theirs, so it is slow (and
        // the question would be one more round trip).
        patience_us = std::min(2 * patience_us, kSlowestUs);
        continue;
      }
      std::vector<const ServerSession*> blockers = server_run_.blockers(*this);
      if (blockers.empty()) {  // slow, not blocked: keep waiting, and ask less often
        patience_us = std::min(2 * patience_us, kSlowestUs);
        continue;
      }
      blocked = true;
      if (settles_before_parking() && server_run_.any_waiting()) {
        // Another waiter may be on its way out (a deadlock victim rolling
        // back, whose locks this statement waits for): let the others settle
        // first, so that what this one sees does not depend on that race.
        server_run_.settle(this);
        if (answer_arrived(0)) break;
        blockers = server_run_.blockers(*this);
        if (blockers.empty()) {
          patience_us = std::min(2 * patience_us, kSlowestUs);
          continue;
        }
      }
      if (tracing && !told_waiting) {
        // Who holds it, so that a story shows that task too (explore/transcript.cpp).
        std::vector<int> holders;
        bool unnamed = false;  // a holder the engine could not name
        for (const ServerSession* b : blockers) {
          if (b) holders.push_back(b->task());
          unnamed |= b == nullptr;
        }
        std::sort(holders.begin(), holders.end());
        holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
        std::string who;
        for (std::size_t i = 0; i < holders.size(); ++i)
          who += (i == 0 ? "" : i + 1 == holders.size() ? " and " : ", ") + sim::task_label(holders[i]);
        scheduler_.record(sim::TraceKind::kSql, text,
                          holders.empty() || unnamed
                              ? std::string("waits for a lock another transaction holds")
                              : fmt::format("waits for a lock {} hold{}", who, holders.size() == 1 ? "s" : ""));
      }
      told_waiting = true;
      const bool queue = cancellable && !no_queue_ && server_run_.must_queue(*this, blockers);
      if (queue && cancel()) {
        if (savepoint && (!run_now("ROLLBACK TO SAVEPOINT twice_statement").ok() ||
                          !run_now("RELEASE SAVEPOINT twice_statement").ok()))
          return failed(Status::error("cannot return to the savepoint before a cancelled statement"));
        requeue = true;
        break;
      }
      if (answer_kept()) break;  // answered before the cancel reached it
      waits_for_ = std::move(blockers);
      patience_us = StatementPatience::first_us();  // woken: what it waits for may have changed
      const bool everyone_waits = scheduler_.block_on_db();
      if (scheduler_.killed()) {
        abandon();
        Result r;
        r.status = Status::crashed();
        return r;
      }
      if (everyone_waits) {
        // Queued statements go again, none queued this time; else the server
        // must break a deadlock among the statements in flight.
        if (server_run_.any_queued()) {
          server_run_.wake_queued_for_deadlock();
        } else if (!server_run_.wait_for_any()) {
          abandon();
          return failed(Status::busy("every task waits for a lock and the server resolved nothing for two minutes"));
        }
      }
    }
    if (!requeue) {
      waits_for_.clear();
      no_queue_ = false;
      return finish(sql, text, savepoint, take_answer(sql));
    }
    // Parked without a statement on the server, until a transaction ends.
    queued_ = true;
    const bool everyone_waits = scheduler_.block_on_db();
    queued_ = false;
    if (scheduler_.killed()) {
      Result r;
      r.status = Status::crashed();
      return r;
    }
    if (everyone_waits) no_queue_ = true;
  }
}

Result ServerSession::finish(std::string_view sql, const std::string& text, bool savepoint, Result r) {
  // A failed statement leaves its transaction as it would without the savepoint.
  if (savepoint && r.ok()) {
    if (Status s = run_now("RELEASE SAVEPOINT twice_statement"); !s.ok())
      r.status = Status::error("releasing the savepoint around the statement: " + s.message());
  }
  if (scheduler_.tracing()) scheduler_.record(sim::TraceKind::kSql, text, env::summarize(sql, r));

  const bool wrote = r.ok() && r.changes > 0 && r.columns.empty();
  if (in_transaction()) {
    if (wrote) uncommitted_.push_back(text);
  } else {
    const bool commit = r.ok() && (is_word(sql, "COMMIT") || is_word(sql, "END"));
    if (wrote || (commit && !uncommitted_.empty())) {
      committed_writes_ = true;
      if (env::CommitWatch* watch = commit_watch()) watch->published();
    }
    uncommitted_.clear();
  }
  // Locks may have been released (a transaction ended, a statement failed):
  // let the server settle the other statements in flight before anyone runs.
  server_run_.settle(this);
  if (!r.ok() || !in_transaction()) server_run_.wake_queued();
  return r;
}

void ServerSession::roll_back_at_close() {
  if (!in_transaction()) return;
  if (!uncommitted_.empty() && scheduler_.tracing()) {
    std::string undone;
    for (const auto& w : uncommitted_) undone += (undone.empty() ? "" : "; ") + w;
    scheduler_.record(sim::TraceKind::kTask,
                      fmt::format("connection closes with a transaction open: rolled back {} write{}: {}",
                                  uncommitted_.size(), uncommitted_.size() == 1 ? "" : "s", undone));
  } else {
    scheduler_.record(sim::TraceKind::kTask, "connection closes with a transaction open: rolled back (no writes yet)");
  }
  (void)run_now("ROLLBACK");
}

void ServerSession::leave_run() {
  server_run_.closed(this);
  // Its locks are gone: waiters may now proceed.
  server_run_.settle(nullptr);
  server_run_.wake_queued();
}

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

bool ServerRun::others_may_hold_locks(const ServerSession& s) const {
  return std::any_of(open_.begin(), open_.end(),
                     [&](const ServerSession* o) { return o != &s && (o->in_flight() || o->in_transaction()); });
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
    int patience_us = StatementPatience::first_us();
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
      const int wait_us = patience_us;
      patience_us = std::min(2 * patience_us, kSlowestUs);
      if (o->answer_arrived(wait_us)) {
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
