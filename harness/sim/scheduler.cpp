#include "sim/scheduler.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/choice_guide.h"
#include "sim/fiber.h"
#include "sim/heartbeat.h"

namespace twice::sim {

struct Scheduler::Task {
  int id = 0;
  State state = State::kWaiting;  // changed by set_state() only
  Micros wake_at = 0;
  const LockWait* lock_wait = nullptr;  // while parked in block_on_db(until): what it waits for
  // Its key's place in wait_groups_; -1: asked on its own, in `own`. Set only
  // while the task runs (filed as ready), so a member of a group is in
  // wait_groups_[wait_group].
  int wait_group = -1;
  WaitAnswer own;
  Filed filed = Filed::kNone;  // the set it is in
  std::uint64_t sleep_seq = 0;  // its entry in sleepers_ while filed as sleeping
  std::string name;
  std::function<void()> body;
  std::function<void(bool)> on_finish;
  int steps = 0;
  bool started = false;
  bool kill_requested = false;
  bool unwinding = false;
  bool deadlock_victim = false;
  int dead_calls = 0;
  bool paused_here = false;  // this scheduling point already drew its pause
  bool in_transaction = false;  // the exhaustive search's footprints: inside BEGIN ... COMMIT
  std::string pending;       // what the task will do when resumed
  std::vector<std::string> notes;  // what it wrote with Env::note
  std::unique_ptr<Fiber> fiber;  // from its start to its end
};

Scheduler::Scheduler(const StrategySpec& strategy, Choices& choices, Trace& trace, SchedulerLimits limits)
    : strategy_(make_strategy(strategy, choices, *this)),
      choices_(choices),
      trace_(trace),
      limits_(limits),
      keep_notes_(strategy.kind == StrategyKind::kScripted && !strategy.steps.empty()) {}

Scheduler::Task* Scheduler::find_task(int id) const {
  return id >= 1 && static_cast<std::size_t>(id) <= tasks_.size() ? tasks_[static_cast<std::size_t>(id) - 1].get()
                                                                   : nullptr;
}

const std::string& Scheduler::pending(int id) const { return tasks_.at(static_cast<std::size_t>(id - 1))->pending; }
const std::vector<std::string>& Scheduler::notes(int id) const {
  return tasks_.at(static_cast<std::size_t>(id - 1))->notes;
}

void Scheduler::note(std::string text) {
  if (!keep_notes_) return;  // only a named script reads them
  if (Task* t = find_task(current_)) t->notes.push_back(std::move(text));
}

Scheduler::~Scheduler() { unwind_parked_tasks(); }

void Scheduler::unwind_parked_tasks() {
  // A run that ended early (an exception on the scheduler side) may leave
  // started tasks parked at a scheduling point: unwind them before their
  // stacks go (their destructors release what they hold).
  // By index: an unwinding task may spawn another (a redelivery), which
  // grows tasks_; it is visited too, as the id-ordered map this was visited.
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    Task* t = tasks_[i].get();
    if (t->started && t->state != State::kDone && t->fiber) {  // no fiber: making it threw
      t->kill_requested = true;
      current_ = t->id;
      t->fiber->resume();
    }
  }
}

int Scheduler::spawn(std::string name, Micros at, std::function<void()> body,
                     std::function<void(bool)> on_finish) {
  const int id = next_id_++;
  auto t = std::make_unique<Task>();
  t->id = id;
  t->name = std::move(name);
  t->body = std::move(body);
  t->on_finish = std::move(on_finish);
  Task& added = *t;
  tasks_.push_back(std::move(t));
  if (at <= now_) {
    set_state(added, State::kReady);
  } else {
    added.wake_at = at;
    set_state(added, State::kSleeping);
  }
  strategy_->on_spawn(id, choices_);
  return id;
}

void Scheduler::at(Micros when, std::function<void()> fn) {
  timers_.push_back(Timer{std::max(when, now_), timer_seq_++, std::move(fn)});
  std::push_heap(timers_.begin(), timers_.end(), std::greater<>{});
}

void Scheduler::fire_due_timers() {
  if (ChoiceGuide* guide = choices_.guide(); guide && !timers_.empty() && timers_.front().at <= now_)
    guide->outside_step();  // the gateway acts between the tasks' steps
  while (!timers_.empty() && timers_.front().at <= now_) {
    std::pop_heap(timers_.begin(), timers_.end(), std::greater<>{});
    std::function<void()> fn = std::move(timers_.back().fn);
    timers_.pop_back();
    fn();  // may add timers of its own
  }
}

void Scheduler::set_state(Task& t, State state) {
  t.state = state;
  file(t);
}

void Scheduler::file(Task& t) {
  switch (t.filed) {
    case Filed::kReady: ready_.erase(t.id); break;
    case Filed::kWaitGroup: wait_groups_[static_cast<std::size_t>(t.wait_group)].members.erase(t.id); break;
    case Filed::kOwnWait: own_waits_.erase(t.id); break;
    case Filed::kPlainWait: plain_waits_.erase(t.id); break;
    case Filed::kSleeping: --sleeping_; break;  // its entry in sleepers_ is left behind
    case Filed::kNone: break;
  }
  t.filed = Filed::kNone;
  switch (t.state) {
    case State::kReady:
      ready_.insert(t.id);
      t.filed = Filed::kReady;
      break;
    case State::kBlockedDb:
      if (!t.lock_wait) {
        plain_waits_.insert(t.id);
        t.filed = Filed::kPlainWait;
      } else if (t.wait_group >= 0) {
        wait_groups_[static_cast<std::size_t>(t.wait_group)].members.insert(t.id);
        t.filed = Filed::kWaitGroup;
      } else {
        own_waits_.insert(t.id);
        t.filed = Filed::kOwnWait;
      }
      break;
    case State::kSleeping:
      t.sleep_seq = ++sleep_seq_;
      sleepers_.push_back(Sleeper{t.wake_at, t.sleep_seq, t.id});
      std::push_heap(sleepers_.begin(), sleepers_.end(), std::greater<>{});
      ++sleeping_;
      t.filed = Filed::kSleeping;
      break;
    case State::kWaiting:
    case State::kDone: break;
  }
}

void Scheduler::wake_sleepers() {
  while (!sleepers_.empty()) {
    const Sleeper top = sleepers_.front();
    Task& t = task(top.id);
    const bool current = t.filed == Filed::kSleeping && t.sleep_seq == top.seq;
    if (current && top.at > now_) return;  // the next wake-up, still to come
    std::pop_heap(sleepers_.begin(), sleepers_.end(), std::greater<>{});
    sleepers_.pop_back();
    // A waiter that was paused when picked waits for its lock again.
    if (current) set_state(t, t.lock_wait ? State::kBlockedDb : State::kReady);
  }
}

template <typename F>
void Scheduler::each_blocked(F&& f) {
  std::size_t low = std::min(own_waits_.low(), plain_waits_.low());
  std::size_t words = std::max(own_waits_.words(), plain_waits_.words());
  for (WaitGroup& g : wait_groups_) {
    low = std::min(low, g.members.low());
    words = std::max(words, g.members.words());
  }
  for (std::size_t w = low; w < words; ++w) {
    std::uint64_t bits = own_waits_.word(w) | plain_waits_.word(w);
    for (const WaitGroup& g : wait_groups_) bits |= g.members.word(w);
    IdSet::each(w, bits, f);
  }
}

void Scheduler::wake_db_waiters() {
  for (std::size_t w = plain_waits_.low(); w < plain_waits_.words(); ++w)
    IdSet::each(w, plain_waits_.word(w), [&](int id) { set_state(task(id), State::kReady); });
}

void Scheduler::wake_db_waiter(int id) {
  if (Task* t = find_task(id); t && t->state == State::kBlockedDb) set_state(*t, State::kReady);
}

// Asked again only when some lock changed since: the answer is the ledger's,
// which changes only with a lock (sim/lock_wait.h).
bool Scheduler::grantable(Task& t) {
  const std::uint64_t asked = lock_changes + 1;
  if (t.own.asked != asked) {
    t.own.grant = t.lock_wait->grantable();
    t.own.asked = asked;
  }
  return t.own.grant;
}

// Waits with one key share one answer, asked of the first of them.
bool Scheduler::grantable(WaitGroup& g) {
  const std::uint64_t asked = lock_changes + 1;
  if (g.answer.asked != asked) {
    g.answer.grant = task(g.members.first()).lock_wait->grantable();
    g.answer.asked = asked;
  }
  return g.answer.grant;
}

void Scheduler::run() {
  Enabled enabled;  // kept across steps: its words are allocated once
  for (;;) {
    fire_due_timers();
    wake_sleepers();
    // The enabled tasks in id order: the ready ones, and those parked on a
    // lock that could be granted now. Each answer is for this step: a lock
    // grantable now may be taken by the task that runs next, and its waiters
    // are then not enabled; they are asked again whenever a lock changed.
    bool any_blocked = !plain_waits_.empty();
    std::size_t low = std::min(ready_.low(), own_waits_.low());
    std::size_t words = std::max(ready_.words(), own_waits_.words());
    for (WaitGroup& g : wait_groups_) {
      if (g.members.empty()) continue;
      if (grantable(g)) {
        low = std::min(low, g.members.low());
        words = std::max(words, g.members.words());
      } else {
        any_blocked = true;
      }
    }
    enabled.restart(low);
    for (std::size_t w = low; w < words; ++w) {
      std::uint64_t bits = ready_.word(w);
      for (WaitGroup& g : wait_groups_)
        if (!g.members.empty() && g.answer.grant) bits |= g.members.word(w);
      IdSet::each(w, own_waits_.word(w), [&](int id) {
        if (grantable(task(id)))
          bits |= std::uint64_t{1} << ((id - 1) % 64);
        else
          any_blocked = true;
      });
      enabled.append_word(bits);
    }
    // The next wake-up: the sleeper wake_sleepers() left on top (one still
    // filed, whose time is to come), or the first timer.
    const bool any_sleeping = sleeping_ > 0;
    Micros next_wake = sleepers_.empty() ? INT64_MAX : sleepers_.front().at;
    if (!timers_.empty()) next_wake = std::min(next_wake, timers_.front().at);

    if (enabled.empty()) {
      if (any_blocked && !any_sleeping) {
        // Every live task waits on a database lock held by another waiting
        // task: SQLite would answer SQLITE_BUSY. The victim is a choice too.
        std::vector<int> blocked;
        each_blocked([&](int id) { blocked.push_back(id); });
        Task& victim = task(blocked[choices_.draw(blocked.size())]);
        victim.deadlock_victim = true;
        victim.lock_wait = nullptr;  // it runs to give up, whatever its lock
        set_state(victim, State::kReady);
        continue;
      }
      if (next_wake == INT64_MAX) break;  // quiescent
      now_ = std::max(now_, next_wake);
      continue;
    }

    if (enabled.size() > 1) ++choice_points_;
    Task& t = task(strategy_->pick(enabled, last_, choices_));
    if (t.state == State::kBlockedDb) set_state(t, State::kReady);  // its lock is grantable: it retries
    if (faults_ && t.started && !t.paused_here) {
      // The task stalls before its operation; the clock moves on for the others.
      if (const std::optional<Micros> pause = faults_->pause_before(t.id, t.pending)) {
        t.paused_here = true;
        t.wake_at = now_ + *pause;
        set_state(t, State::kSleeping);
        continue;
      }
    }
    if (faults_ && t.started && faults_->crash_before(t.id, t.pending)) {
      crash();
      continue;
    }
    now_ += choices_.between(limits_.latency_min, limits_.latency_max);
    ++steps_;
    beat();
    if (++t.steps > limits_.task_step_budget) {
      kill(t, fmt::format("{} ({}) made {} scheduling points without returning (budget {})",
                          task_label(t.id), t.name, t.steps - 1, limits_.task_step_budget), true);
      if (ChoiceGuide* guide = choices_.guide()) guide->outside_step();
      continue;
    }
    if (steps_ > limits_.run_step_budget) {
      for (std::size_t i = 0; i < tasks_.size(); ++i)  // by index: killing may spawn
        if (Task* other = tasks_[i].get(); other->state != State::kDone && other->started)
          kill(*other,
               fmt::format("the run exceeded {} scheduling points, all tasks together: a handler that never "
                           "finishes, or a scenario too large for one run (fewer orders, attempts or copies)",
                           limits_.run_step_budget),
               true);
      break;
    }
    t.paused_here = false;
    interleaving_ = (interleaving_ ^ static_cast<std::uint64_t>(t.id)) * 0x100000001b3ULL;
    ChoiceGuide* guide = choices_.guide();
    bool first_step = !t.started;
    std::string operation = guide ? t.pending : std::string();
    resume(t);
    if (choices_.exhaustive() && first_step && t.state == State::kReady && !t.kill_requested) {
      // Under the exhaustive strategy a task's start (its code up to the
      // first Env call, which touches nothing shared) runs on into its first
      // operation, with no scheduling point between: an order that runs
      // others there equals one that runs them before the start. Counted as
      // a step of its own, as any order would count it. Without this, a
      // start that commutes with everything sleeps in the search's sleep sets
      // and the order kept for each class may need one more preemption than
      // the bound allows (sleep sets are sound for every order, not per bound).
      now_ += choices_.between(limits_.latency_min, limits_.latency_max);
      ++steps_;
      ++t.steps;
      beat();
      first_step = false;
      if (guide) operation = t.pending;
      resume(t);
    }
    if (guide) guide->stepped(step_footprint(t, first_step, operation));
  }
}

Footprint Scheduler::step_footprint(Task& t, bool first_step, const std::string& operation) {
  // The end of a task others wait for (its reply goes to the gateway, a job's
  // tick may run again) is felt by everyone.
  if (t.state == State::kDone && t.on_finish) return Footprint::all();
  if (first_step) return Footprint{};  // its code up to the first Env call: its own
  // Without a trace the operations' texts are not built: nothing is known.
  if (!tracing()) return Footprint::all();
  Footprint f = footprint_of(operation, t.in_transaction);
  t.in_transaction = in_transaction_after(operation, t.in_transaction);
  return f;
}

void Scheduler::resume(Task& t) {
  current_ = t.id;
  last_ = t.id;
  if (!t.started) {
    t.started = true;
    if (tracing()) record(TraceKind::kTask, fmt::format("starts {}", t.name));
    t.fiber = std::make_unique<Fiber>([this, &t] {
      try {
        t.body();
      } catch (const TaskKilled&) {
        // taken down: the body ended without effect
      }
      set_state(t, State::kDone);
    });
  }
  t.fiber->resume();
  current_ = 0;
  if (t.state == State::kDone) {
    t.fiber.reset();
    // A finished task's connection is closed: whatever it held is released.
    wake_db_waiters();
    if (t.on_finish) t.on_finish(t.kill_requested);
  }
}

void Scheduler::kill(Task& t, const std::string& why, bool stuck) {
  if (stuck) stuck_.push_back(why);
  if (tracing()) trace_.add(TraceEvent{now_, t.id, TraceKind::kTask, fmt::format("killed: {}", why), {}});
  t.kill_requested = true;
  if (t.started) {
    resume(t);  // unwinds to the body's end
  } else {
    set_state(t, State::kDone);
    if (t.on_finish) t.on_finish(true);
  }
}

void Scheduler::crash() {
  // Every task of the process dies: running ones unwind (their connections
  // close, rolling back open transactions); requests that had arrived but not
  // started are lost with the process.
  for (std::size_t i = 0; i < tasks_.size(); ++i) {  // by index: a killed task's end may spawn another
    Task* t = tasks_[i].get();
    if (t->state == State::kDone) continue;
    if (t->started || t->state == State::kReady || t->state == State::kBlockedDb)
      kill(*t, "the process died", false);
  }
  faults_->crashed();
}

bool Scheduler::point(std::string what) {
  Task& t = task(current_);
  if (t.unwinding || t.kill_requested) {
    t.unwinding = true;
    if (++t.dead_calls > kDeadCallsBeforeThrow && std::uncaught_exceptions() == 0) throw TaskKilled{};
    return false;
  }
  t.pending = std::move(what);
  const int self = current_;
  t.fiber->suspend();
  current_ = self;
  if (t.kill_requested) {
    t.unwinding = true;
    return false;
  }
  return true;
}

bool Scheduler::block_on_db() {
  Task& t = task(current_);
  if (t.unwinding) return true;
  set_state(t, State::kBlockedDb);
  if (!point(t.pending)) return true;
  if (t.deadlock_victim) {
    t.deadlock_victim = false;
    return true;
  }
  return false;
}

bool Scheduler::block_on_db(const LockWait& until) {
  Task& t = task(current_);
  if (t.unwinding) return true;
  t.lock_wait = &until;
  t.own = {};  // a new wait: ask it (a group's answer holds for every wait of its key)
  t.wait_group = -1;
  if (const LockWaitKey key = until.key(); key.what) {
    auto it = std::find_if(wait_groups_.begin(), wait_groups_.end(), [&](const WaitGroup& g) { return g.key == key; });
    if (it == wait_groups_.end()) it = wait_groups_.insert(it, WaitGroup{key, {}, {}});
    t.wait_group = static_cast<int>(it - wait_groups_.begin());
  }
  const bool gives_up = block_on_db();
  t.lock_wait = nullptr;
  file(t);  // still parked when it is being taken down: no longer on `until`, which goes now
  return gives_up;
}

void Scheduler::sleep_for(Micros duration) {
  Task& t = task(current_);
  if (t.unwinding || t.kill_requested) {
    // A dead call, counted as any other: a handler that sleeps in a loop
    // after its task was killed (waiting for a flag) gets TaskKilled thrown
    // at it, where returning at once without counting spun it for ever.
    (void)point("sleep");
    return;
  }
  t.wake_at = now_ + duration;
  set_state(t, State::kSleeping);
  (void)point("sleep");
}

bool Scheduler::killed() const {
  const Task* t = find_task(current_);
  return t && (t->unwinding || t->kill_requested);
}

void Scheduler::record(TraceKind kind, std::string text, std::string result) {
  trace_.add(TraceEvent{now_, current_, kind, std::move(text), std::move(result)});
}

}  // namespace twice::sim
