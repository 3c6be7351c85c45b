// Hostile handlers: what a handler under test may do to the process that runs
// it. Each misbehaves in one way, then (if it is still running) handles the
// notify as plugin-cas does, so that what its cell reports is the
// misbehaviour alone. Built as a --plugin, as a user's handlers are: the
// containment of cells must hold for plugins too. tests/hostile/hostile_test.sh
// runs them and checks each cell's verdict.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "twice/handler.h"

namespace {

// plugin-cas's handling: compare-and-swap on the status and the credit, in one transaction.
twice::Reply credit_once(const twice::Notify& n, twice::Env& env) {
  twice::Db& db = env.db();
  auto tx = db.begin(twice::TxMode::kImmediate);
  if (!tx.ok()) return twice::Reply::fail();
  const twice::Result order = db.exec("SELECT user_id FROM orders WHERE order_no = ? AND amount = ? AND currency = ?",
                                      {n.out_trade_no, n.amount, n.currency});
  if (!order.ok() || order.empty()) return twice::Reply::fail("unknown order");
  const std::string user = order.at(0, "user_id").as_text();
  const twice::Result swapped =
      db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ? AND status = 'WAIT_PAY'",
              {n.transaction_id, n.out_trade_no});
  if (!swapped.ok()) return twice::Reply::fail();
  if (swapped.changes == 0) return twice::Reply::success();
  if (!db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)", {n.out_trade_no, user, n.amount}).ok() ||
      !db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", {n.amount, user}).ok() ||
      !tx.commit().ok())
    return twice::Reply::fail();
  return twice::Reply::success();
}

class Segfault final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    // Both volatile: a store through a non-volatile null pointer is undefined
    // behaviour the optimiser may drop (GCC 12 -O3 did once Reply::fail grew).
    volatile int* volatile nowhere = nullptr;
    *nowhere = 1;
    return twice::Reply::fail();
  }
};

class Abort final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override { std::abort(); }
};

// Deeper and deeper until the fiber's guard page.
std::size_t descend(std::size_t depth) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth == static_cast<std::size_t>(-1)) return 0;
  return descend(depth + 1) + static_cast<std::size_t>(frame[0]);
}

class StackOverflow final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    return descend(0) == 1 ? twice::Reply::success() : twice::Reply::fail();
  }
};

// The Env belongs to the task's fiber: another thread calling it.
class ThreadCallsEnv final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    std::thread([&] { (void)env.db().exec("SELECT count(*) FROM orders"); }).join();
    return credit_once(n, env);
  }
};

class Exit final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override { std::exit(0); }
};

class Spin final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    volatile unsigned long spins = 0;
    for (;;) {
      const unsigned long seen = spins;
      spins = seen + 1;
    }
  }
};

class Hog final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    // 64 MiB at a time, left untouched: --cell-memory limits the address
    // space, so reserving is what reaches it. Filling each block (as the
    // first version did, 1 MiB at a time) took seconds on a loaded machine,
    // and the cell's 3 s no-scheduling-point watchdog could fire first.
    std::vector<std::unique_ptr<char[]>> hoard;
    for (;;) hoard.emplace_back(new char[std::size_t{64} << 20]);
    return credit_once(n, env);
  }
};

class EmptySql final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    env.note("empty: " + env.db().exec("").status.to_string());
    env.note("comment: " + env.db().exec("-- comment").status.to_string());
    return credit_once(n, env);
  }
};

class BadSchema final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override { return credit_once(n, env); }
  const twice::Schema& schema() const override {
    static const twice::Schema broken = [] {
      twice::Schema s = twice::reference_schema();
      s.setup_sql += "\nCREATE TABLE half_written (";
      return s;
    }();
    return broken;
  }
};

// Runs on SQLite; its PostgreSQL schema does not parse (a later engine of
// `twice stress --engine sqlite --engine postgres` fails after a report).
class PostgresSchema final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override { return credit_once(n, env); }
  const twice::Schema& schema() const override {
    static const twice::Schema broken = [] {
      twice::Schema s = twice::reference_schema();
      s.postgres_setup_sql += "\nCREATE TABLE half_written (";
      return s;
    }();
    return broken;
  }
};

class Wal final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    env.note("journal_mode=WAL: " + env.db().exec("PRAGMA journal_mode=WAL").status.to_string());
    return credit_once(n, env);
  }
};

class Attach final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    env.note("attach: " + env.db().exec("ATTACH DATABASE 'hostile-attached.db' AS elsewhere").status.to_string());
    return credit_once(n, env);
  }
};

// Credits every notify it is given, unchecked: a double credit when a copy comes twice.
twice::Reply credit_blindly(const twice::Notify& n, twice::Env& env) {
  twice::Db& db = env.db();
  const twice::Result order = db.exec("SELECT user_id FROM orders WHERE order_no = ?", {n.out_trade_no});
  if (!order.ok() || order.empty()) return twice::Reply::fail("unknown order");
  const std::string user = order.at(0, "user_id").as_text();
  (void)db.exec("UPDATE orders SET status = 'PAID', transaction_id = ? WHERE order_no = ?",
                {n.transaction_id, n.out_trade_no});
  (void)db.exec("INSERT INTO ledger(order_no, user_id, amount) VALUES (?, ?, ?)", {n.out_trade_no, user, n.amount});
  (void)db.exec("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", {n.amount, user});
  return twice::Reply::success();
}

// Correct for its first deliveries in a process, then credits every notify:
// what it reports after many runs, a fresh process running that seed alone
// does not show.
class StaticState final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static int deliveries = 0;
    if (++deliveries < 40) return credit_once(n, env);
    return credit_blindly(n, env);
  }
};

// Forks, once per process, a process that sleeps for 300 s (its pid written
// into $HOSTILE_PIDS, a folder, when set), then handles as plugin-cas: the
// cell must not wait for it, nor leave it behind.
class Fork final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static bool forked = false;
    if (!forked) {
      forked = true;
      if (const pid_t pid = ::fork(); pid == 0) {
        ::sleep(300);
        ::_exit(0);
      } else if (const char* dir = std::getenv("HOSTILE_PIDS"); dir && pid > 0) {
        std::FILE* f = std::fopen((std::string(dir) + "/" + std::to_string(pid)).c_str(), "w");
        if (f) std::fclose(f);
      }
    }
    return credit_once(n, env);
  }
};

// Starts a daemon once per process, as a handler might start a helper: fork,
// setsid(), fork again, and the grandchild, out of the cell's process group
// and session, becomes `sleep 300` named $HOSTILE_MARKER (for `pgrep -f`;
// "twice-hostile-daemon" when unset), its stdio on /dev/null.
void start_daemon_once() {
  static std::atomic<bool> started{false};  // `twice stress` calls it from many threads at once
  if (started.exchange(true)) return;
  const char* marker = std::getenv("HOSTILE_MARKER");
  if (!marker) marker = "twice-hostile-daemon";
  const pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    if (::fork() == 0) {
      const int null = ::open("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
      ::execl("/bin/sleep", marker, "300", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::_exit(0);
  }
  if (child > 0) ::waitpid(child, nullptr, 0);
}

class Daemon final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    start_daemon_once();
    return credit_once(n, env);
  }
};

// Starts the daemon, then spins: a cell that times out.
class DaemonSpin final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    start_daemon_once();
    volatile unsigned long spins = 0;
    for (;;) {
      const unsigned long seen = spins;
      spins = seen + 1;
    }
  }
};

// Starts the daemon, then calls the warehouse: in `twice stress`, which has no
// services, the run ends on an error after the handler forked.
class DaemonCall final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    start_daemon_once();
    [[maybe_unused]] const twice::ServiceReply r = env.call("warehouse", twice::ServiceRequest{"ship", n.out_trade_no, {}, {}});
    return credit_once(n, env);
  }
};

// Reads its standard input once per process: at end of file at once it
// handles as plugin-cas; anything else read (or an error) aborts.
class ReadsStdin final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static std::atomic<bool> read_once{false};  // many threads at once under `twice stress`
    if (!read_once.exchange(true)) {
      char c = 0;
      if (::read(STDIN_FILENO, &c, 1) != 0) std::abort();
    }
    return credit_once(n, env);
  }
};

// Prints to stdout (a line, raw bytes, an escape sequence) and to stderr.
class Print final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    std::printf("HOSTILE-STDOUT printf %s\n", n.out_trade_no.c_str());
    std::cout << "HOSTILE-STDOUT cout \x1b[31m\xff\xfe" << std::endl;
    std::fprintf(stderr, "HOSTILE-STDERR\n");
    return credit_once(n, env);
  }
};

// Closes every file descriptor from 3 up (twice's pipe among them) on its
// first delivery, then handles as plugin-cas.
class CloseFds final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static bool closed = false;
    if (!closed) {
      closed = true;
      for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    }
    return credit_once(n, env);
  }
};

class SigTerm final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override {
    std::raise(SIGTERM);
    return twice::Reply::fail();
  }
};

// Puts SIGINT and SIGTERM back to their defaults (as a library might), waits
// until ./hostile-go exists (tests/hostile/signals_test.sh makes it once it
// has pressed Ctrl-C), then handles as plugin-cas.
class SignalDefaults final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    while (::access("hostile-go", F_OK) != 0) ::usleep(10'000);
    return credit_once(n, env);
  }
};

// Waits until ./hostile-go exists, then handles as plugin-cas: a run under
// way for as long as tests/hostile/signals_test.sh wants it to be, its
// SIGINT handling left as it is (it runs in twice's own process too).
class WaitsForGo final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    while (::access("hostile-go", F_OK) != 0) ::usleep(10'000);
    return credit_once(n, env);
  }
};

// Takes 100 ms of real time over each notify, then handles as plugin-cas: a
// cell of many runs that is still under way when tests/hostile/signals_test.sh
// stops twice, in a child process or in twice's own.
class Slow final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    ::usleep(100'000);
    return credit_once(n, env);
  }
};

// Double-credits the first 3 deliveries of the first process to run it (the
// one that creates ./hostile-first-process), then handles as plugin-cas: run
// 1 of a cell shows double_credit, the same run in a fresh process does not.
class FirstProcess final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    static const bool first = [] {
      const int fd = ::open("hostile-first-process", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
      if (fd >= 0) ::close(fd);
      return fd >= 0;
    }();
    static int deliveries = 0;
    if (first && ++deliveries <= 3) return credit_blindly(n, env);
    return credit_once(n, env);
  }
};

}  // namespace

TWICE_REGISTER_HANDLER(Segfault, "hostile-segfault", "writes through a null pointer");
TWICE_REGISTER_HANDLER(Abort, "hostile-abort", "calls abort()");
TWICE_REGISTER_HANDLER(StackOverflow, "hostile-stack-overflow", "recurses without end");
TWICE_REGISTER_HANDLER(ThreadCallsEnv, "hostile-thread-env", "calls its Env from a std::thread");
TWICE_REGISTER_HANDLER(Exit, "hostile-exit", "calls exit(0)");
TWICE_REGISTER_HANDLER(Spin, "hostile-spin", "spins without an Env call");
TWICE_REGISTER_HANDLER(Hog, "hostile-hog", "allocates without end");
TWICE_REGISTER_HANDLER(EmptySql, "hostile-empty-sql", "runs exec(\"\") and exec(\"-- comment\")");
TWICE_REGISTER_HANDLER(BadSchema, "hostile-bad-schema", "a schema that does not parse");
TWICE_REGISTER_HANDLER(PostgresSchema, "hostile-postgres-schema", "a PostgreSQL schema that does not parse");
TWICE_REGISTER_HANDLER(Wal, "hostile-wal", "switches the database to journal_mode=WAL");
TWICE_REGISTER_HANDLER(Attach, "hostile-attach", "attaches a database file of its own");
TWICE_REGISTER_HANDLER(StaticState, "hostile-static-state", "keeps a count of deliveries in a static");
TWICE_REGISTER_HANDLER(Fork, "hostile-fork", "forks a process that sleeps for 300 s");
TWICE_REGISTER_HANDLER(Print, "hostile-print", "prints to stdout and stderr");
TWICE_REGISTER_HANDLER(Daemon, "hostile-daemon", "starts a daemon (fork, setsid, fork) that sleeps for 300 s");
TWICE_REGISTER_HANDLER(DaemonSpin, "hostile-daemon-spin", "starts a daemon, then spins without an Env call");
TWICE_REGISTER_HANDLER(DaemonCall, "hostile-daemon-call", "starts a daemon, then calls the warehouse");
TWICE_REGISTER_HANDLER(ReadsStdin, "hostile-stdin", "reads its standard input; aborts unless at end of file");
TWICE_REGISTER_HANDLER(CloseFds, "hostile-close-fds", "closes every file descriptor from 3 up");
TWICE_REGISTER_HANDLER(SigTerm, "hostile-sigterm", "raises SIGTERM");
TWICE_REGISTER_HANDLER(SignalDefaults, "hostile-signal-defaults", "puts SIGINT and SIGTERM back to their defaults, waits for ./hostile-go");
TWICE_REGISTER_HANDLER(WaitsForGo, "hostile-waits-for-go", "waits until ./hostile-go exists");
TWICE_REGISTER_HANDLER(Slow, "hostile-slow", "takes 100 ms of real time over each notify");
TWICE_REGISTER_HANDLER(FirstProcess, "hostile-first-process",
                       "double-credits the first deliveries of the first process to run it (a file says which)");
// Its name and description carry a colour, a window title and a newline: `twice list` shows them escaped.
TWICE_REGISTER_HANDLER(Wal, "hostile-\x1b[31mname", "a description with \x1b]0;a title\x07 and a\nsecond line");
