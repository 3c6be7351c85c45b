#include "engine/mariadb_server.h"

#include <cstdlib>
#include <mysql.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace fs = std::filesystem;

namespace twice::engine {
namespace {

constexpr const char* kHint = "install the mariadb-server package (scripts/setup.sh)";

Status cannot_start(const std::string& why) { return Status::error("cannot start MariaDB: " + why); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// True when a client can log in on `socket`.
bool answers(const std::string& socket) {
  MYSQL* m = mysql_init(nullptr);
  if (!m) return false;
  unsigned int timeout = 2;
  mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  const bool ok = mysql_real_connect(m, nullptr, "root", nullptr, nullptr, 0, socket.c_str(), 0) != nullptr;
  mysql_close(m);
  return ok;
}

}  // namespace

Status MariadbServer::start(std::unique_ptr<MariadbServer>& out) {
  out.reset();
  // TWICE_MARIADB_BINDIR, when set, is the only place looked (tests point it at a broken server).
  const char* bindir = std::getenv("TWICE_MARIADB_BINDIR");
  auto find = [&](const std::string& name, const std::string& old_name) {
    if (bindir) return find_program({std::string(bindir) + "/" + name});
    return find_program({name, "/usr/sbin/" + name, old_name, "/usr/sbin/" + old_name});
  };
  const auto install_db = find("mariadb-install-db", "mysql_install_db");
  if (!install_db) return cannot_start(fmt::format("mariadb-install-db not found; {}", kHint));
  const auto mariadbd = find("mariadbd", "mysqld");
  if (!mariadbd) return cannot_start(fmt::format("mariadbd not found; {}", kHint));

  const std::string base = server_base_folder("TWICE_MARIADB_DIR");
  std::string pattern = base + "/twice-mariadb-XXXXXX";
  if (!::mkdtemp(pattern.data())) return cannot_start("cannot create a folder under " + base);
  std::unique_ptr<MariadbServer> server(new MariadbServer());
  server->folder_ = pattern;
  server->socket_ = server->folder_ + "/s";
  if (server->socket_.size() > kMaxSocketPath)
    return cannot_start(fmt::format("the socket path under {} is longer than 107 bytes; {}", base,
                                    std::getenv("TWICE_MARIADB_DIR") ? "set TWICE_MARIADB_DIR to a shorter folder" : "set TWICE_MARIADB_DIR to a short folder, such as /tmp"));
  // The guardian reads the server's pid from data/postmaster.pid (the name
  // PostgreSQL uses; --pid-file puts MariaDB's there too).
  if (Status s = server->guardian_.start(SIGTERM, server->folder_); !s.ok()) return cannot_start(s.message());

  const std::string data = server->folder_ + "/data";
  const std::string log = server->folder_ + "/log";
  // Its temporary files in its own folder: servers bootstrapped at once in
  // one /tmp collide on their temporary tables' names (mariadb-install-db
  // failed with "Unknown table 'mysql.tmp_user_sys'" in 5 of 24 starts, four
  // at a time; none of 32 with a folder each).
  const std::string tmp = server->folder_ + "/tmp";
  if (::mkdir(tmp.c_str(), 0700) != 0) return cannot_start(fmt::format("cannot create {}: {}", tmp, std::strerror(errno)));
  std::string output;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> install = {*install_db, "--no-defaults", "--datadir=" + data,
                                      "--auth-root-authentication-method=normal", "--skip-test-db",
                                      "--skip-name-resolve", "--tmpdir=" + tmp};
  if (::geteuid() == 0) install.push_back("--user=root");
  if (bindir) install.push_back(std::string("--basedir=/usr"));
  // In a group of its own that the guardian kills before it removes the
  // folder: mariadb-install-db dies with twice, but its mariadbd --bootstrap
  // would go on writing files into the folder after it was removed.
  if (Status s = run_to_completion(install, RunAs{}, output, &server->guardian_); !s.ok()) {
    // Its last lines are advice; the cause is the first line that says ERROR.
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);)
      if (line.find("ERROR") != std::string::npos) return cannot_start(fmt::format("{} ({})", s.message(), line));
    return cannot_start(s.message());
  }
  server->install_seconds_ = seconds_since(t0);

  // Nothing durable and nothing on the network. utf8mb4_bin: text compares
  // byte for byte, as on SQLite and PostgreSQL (the default collation would
  // take 'paid' for 'PAID'). Deadlocks are detected at once (InnoDB's
  // default); a lock wait never times out during a run (the scheduler tells a
  // wait from a stall itself). No automatic statistics: InnoDB recalculates a
  // table's persistent statistics in a background thread, at most every 10 s,
  // once a tenth of its rows changed, so a plan could depend on when a run
  // happens; with it off they are what TRUNCATE leaves, in every run.
  // innodb_snapshot_isolation OFF, 10.11's default, which
  // scenarios/expected.toml was written for: ON (11.8's default, Debian 13)
  // turns a REPEATABLE READ write to a row changed since the snapshot into
  // error 1020, and check-in-txn and rmw-in-txn no longer double-credit or
  // lose updates there (docs/engines.md). --loose-: a server without the
  // variable (before 10.6.18) still starts.
  t0 = std::chrono::steady_clock::now();
  Status started;
  std::vector<std::string> argv = {*mariadbd, "--no-defaults", "--datadir=" + data, "--skip-networking",
                                   "--socket=" + server->socket_, "--pid-file=" + data + "/postmaster.pid",
                                   "--tmpdir=" + tmp,
                                   "--log-error=" + log, "--skip-log-bin", "--skip-name-resolve",
                                   "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",
                                   "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=32M",
                                   "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0",
                                   "--innodb-lock-wait-timeout=600", "--max-connections=500",
                                   "--performance-schema=OFF", "--innodb-stats-auto-recalc=OFF",
                                   "--loose-innodb-snapshot-isolation=OFF"};
  // It runs as whoever runs twice; as root only when told so.
  if (::geteuid() == 0) argv.push_back("--user=root");
  server->pid_ = start_background(argv, RunAs{}, log + ".out", started);
  if (!started.ok()) return cannot_start(started.message());

  if (Status s = wait_until_serving(server->pid_, [&server] { return answers(server->socket_); }, log); !s.ok())
    return cannot_start(s.message());
  server->start_seconds_ = seconds_since(t0);
  out = std::move(server);
  return Status::OK();
}

MariadbServer::~MariadbServer() { stop(); }

void MariadbServer::stop() {
  // SIGTERM: a normal shutdown (open sessions are rolled back); SIGKILL after 30 s.
  stop_server(pid_, SIGTERM, folder_, guardian_);
}

}  // namespace twice::engine
