// Starting the programs of a database server: finding them, running one to
// completion (initdb), starting one in the background (postgres), and the
// guardian that stops a server and removes its folder when this process dies
// in a way no destructor sees (SIGKILL, a crash, a signal's default action).
// Used by the server classes; call from one thread at a time per object.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "twice/status.h"

namespace twice::engine {

// Whom a server's programs run as: PostgreSQL refuses to run as root, so when
// twice runs as root they run as the package's `postgres` user.
struct RunAs {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};
// RunAs for `user` when this process is root, else no switch. Fails when the
// user does not exist.
Status run_as_for(const std::string& user, RunAs& out);

// A Unix socket's path must fit sockaddr_un.sun_path (108 bytes with its NUL).
constexpr std::size_t kMaxSocketPath = 107;

// Where a throwaway server's folder goes: the folder the environment variable
// `override_env` names, when set; else /dev/shm (memory: each run's reset
// makes files, and a disk under others' builds made that 35-53 ms instead of
// 5.5); else the temporary directory, or /tmp when that would leave too little
// room for the socket's path.
std::string server_base_folder(const char* override_env);

// The first of `candidates` (absolute paths, or names looked up in PATH) that
// is an executable file; nullopt when none is.
std::optional<std::string> find_program(const std::vector<std::string>& candidates);

class Guardian;

// Runs argv[0] with `argv`, stdin from /dev/null, stdout and stderr into
// `output`, and waits; the program is killed if this process dies. OK when it exits 0; otherwise an error naming the exit
// status, with the output's last lines. With a `guardian`, the program runs
// in a process group of its own, which the guardian kills (every process the
// program started, too: mariadb-install-db's mariadbd --bootstrap) before it
// removes the folder, if this process dies while the program runs.
Status run_to_completion(const std::vector<std::string>& argv, const RunAs& as, std::string& output,
                         Guardian* guardian = nullptr);

// Starts argv[0] in its own session (a Ctrl-C at the terminal reaches twice,
// which stops the server in order), stdout and stderr appended to `log_path`.
// Returns its pid, or -1 and an error.
pid_t start_background(const std::vector<std::string>& argv, const RunAs& as, const std::string& log_path,
                       Status& status);

// Waits up to `seconds` for child `pid` to exit; sends SIGKILL after that and
// reaps it. True when it exited by itself.
bool wait_for_exit(pid_t pid, double seconds);

// A process in its own session that holds the read end of a pipe: when this
// process goes away without dismissing it, it kills the process group it was
// last told to watch (a program run to completion that writes into the
// folder, and whatever that program started), sends `stop_signal` to the
// server whose pid is in `folder`/data/postmaster.pid (if one started), waits
// for it to go, and removes `folder`. Started as soon as the folder exists,
// so that no exit path leaves it behind.
class Guardian {
 public:
  Guardian() = default;
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;
  ~Guardian() { dismiss(); }
  Status start(int stop_signal, const std::string& folder);
  // The process group to kill first if this process dies; -1: none any more
  // (it ended: its number may be reused).
  void watch_group(pid_t pgid);
  // The server was stopped and the folder removed in order: the guardian exits
  // without touching anything.
  void dismiss();

 private:
  pid_t pid_ = -1;
  int pipe_fd_ = -1;
};

// The last `n` lines of `text`, for error messages.
std::string last_lines(const std::string& text, int n);

// The whole file at `path` ("" when it cannot be read).
std::string read_text(const std::string& path);

// Waits, polling every 10 ms, until `answers()` says the server accepts
// connections (OK), the server `pid` exits (pid becomes -1), or 60 s pass;
// an error then says which, with the last two lines of `log_path`.
Status wait_until_serving(pid_t& pid, const std::function<bool()>& answers, const std::string& log_path);

// Stops server `pid` with `stop_signal` (SIGKILL after 30 s; pid becomes
// -1), removes `folder` ("" for none), and dismisses `guardian`.
void stop_server(pid_t& pid, int stop_signal, const std::string& folder, Guardian& guardian);

}  // namespace twice::engine
