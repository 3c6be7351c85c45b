#include "engine/postgres_server.h"

#include <cstdlib>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <libpq-fe.h>

namespace fs = std::filesystem;

namespace twice::engine {
namespace {

constexpr const char* kHint = "install the postgresql package (scripts/setup.sh)";
constexpr const char* kSocketName = "/.s.PGSQL.5432";

Status cannot_start(const std::string& why) { return Status::error("cannot start PostgreSQL: " + why); }

// Debian installs each major version's programs in /usr/lib/postgresql/N/bin,
// off PATH; the newest one wins. TWICE_PG_BINDIR, when set, is the only place looked.
std::optional<std::string> find_pg_program(const std::string& name) {
  if (const char* dir = std::getenv("TWICE_PG_BINDIR")) return find_program({std::string(dir) + "/" + name});
  std::vector<std::string> candidates;
  std::vector<int> versions;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string v = entry.path().filename().string();
    if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit)) versions.push_back(std::stoi(v));
  }
  std::sort(versions.rbegin(), versions.rend());
  for (int v : versions) candidates.push_back(fmt::format("/usr/lib/postgresql/{}/bin/{}", v, name));
  candidates.push_back(name);
  return find_program(candidates);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Status PostgresServer::start(std::unique_ptr<PostgresServer>& out) {
  out.reset();
  const auto initdb = find_pg_program("initdb");
  if (!initdb) return cannot_start(fmt::format("initdb not found; {}", kHint));
  const auto postgres = find_pg_program("postgres");
  if (!postgres) return cannot_start(fmt::format("postgres not found; {}", kHint));
  RunAs as;
  if (Status s = run_as_for("postgres", as); !s.ok()) return cannot_start(s.message() + "; " + kHint);

  const std::string base = server_base_folder("TWICE_PG_DIR");
  std::string pattern = base + "/twice-pg-XXXXXX";
  if (!::mkdtemp(pattern.data())) return cannot_start("cannot create a folder under " + base);
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->folder_ = pattern;
  if (server->folder_.size() + std::string_view(kSocketName).size() > kMaxSocketPath)
    return cannot_start(fmt::format("the socket path under {} is longer than 107 bytes; {}", base,
                                    std::getenv("TWICE_PG_DIR") ? "set TWICE_PG_DIR to a shorter folder" : "set TWICE_PG_DIR to a short folder, such as /tmp"));
  if (as.switch_user && ::chown(server->folder_.c_str(), as.uid, as.gid) != 0)
    return cannot_start("cannot hand " + server->folder_ + " to the postgres user");
  if (Status s = server->guardian_.start(SIGQUIT, server->folder_); !s.ok()) return cannot_start(s.message());

  const std::string data = server->folder_ + "/data";
  const std::string log = server->folder_ + "/log";
  std::string output;
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = run_to_completion({*initdb, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                                    "--locale=C", "--no-sync", "--no-instructions"},
                                   as, output, &server->guardian_);  // initdb's postgres children die with it
      !s.ok())
    return cannot_start(s.message());
  server->initdb_seconds_ = seconds_since(t0);

  // Nothing durable and nothing on the network: fsync and full-page writes off,
  // no TCP listener, the socket in our own folder. No autovacuum: its ANALYZE
  // and VACUUM set the planner's statistics at moments the wall clock picks,
  // and a plan decides which predicate locks SERIALIZABLE takes (a seq scan
  // locks the whole table). Dynamic shared memory in files of the data folder
  // (mmap), not in /dev/shm (posix), so that a killed server leaves none behind.
  // The folder may be on tmpfs (memory): WAL kept to 64 MB.
  t0 = std::chrono::steady_clock::now();
  Status started;
  server->pid_ = start_background({*postgres, "-D", data, "-k", server->folder_, "-c", "listen_addresses=",
                                   "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                                   "-c", "max_connections=300", "-c", "shared_buffers=32MB", "-c",
                                   "max_pred_locks_per_transaction=256", "-c", "autovacuum=off", "-c",
                                   "dynamic_shared_memory_type=mmap", "-c", "max_wal_size=64MB", "-c",
                                   "min_wal_size=32MB"},
                                  as, log, started);
  if (!started.ok()) return cannot_start(started.message());

  const std::string probe = server->conninfo("postgres") + " connect_timeout=2";
  if (Status s = wait_until_serving(server->pid_, [&probe] { return PQping(probe.c_str()) == PQPING_OK; }, log); !s.ok())
    return cannot_start(s.message());
  server->start_seconds_ = seconds_since(t0);
  out = std::move(server);
  return Status::OK();
}

PostgresServer::~PostgresServer() { stop(); }

void PostgresServer::stop() {
  // SIGINT: fast shutdown (open sessions are rolled back); SIGKILL after 30 s.
  stop_server(pid_, SIGINT, folder_, guardian_);
}

std::string PostgresServer::conninfo(const std::string& dbname) const {
  return fmt::format("host={} port=5432 user=postgres dbname={}", folder_, dbname);
}

}  // namespace twice::engine
