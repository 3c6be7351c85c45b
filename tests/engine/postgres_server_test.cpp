// The throwaway server: it starts, it stops, and it leaves nothing behind on
// any exit path (destruction, a failed start, this process killed outright).
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include "../catches_sigint.h"
#include "engine/postgres_server.h"
#include "engine_environment.h"

namespace fs = std::filesystem;
using twice::Status;
using twice::engine::PostgresServer;
using twice::testing::eventually;
using twice::testing::ScopedEnv;

namespace {

// A zombie counts as gone: in a container, PID 1 may never reap the server
// once its parent died.
bool process_exists(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

std::set<std::string> pg_folders() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    if (e.path().filename().string().starts_with("twice-pg-")) out.insert(e.path().string());
  return out;
}

// A temporary folder of the test's own (TMPDIR and TWICE_PG_DIR for this
// process and its children): other processes on the machine start servers
// under /dev/shm and /tmp too, and "nothing new under the temporary folder"
// must be about ours alone.
struct PrivateTmp {
  std::string dir;
  std::unique_ptr<ScopedEnv> env;
  std::unique_ptr<ScopedEnv> pg_dir;
  PrivateTmp() {
    std::string pattern = "/tmp/twice-test-XXXXXX";
    dir = ::mkdtemp(pattern.data()) ? pattern : std::string();
    ::chmod(dir.c_str(), 0755);  // the postgres user must reach its folder inside
    env = std::make_unique<ScopedEnv>("TMPDIR", dir);
    pg_dir = std::make_unique<ScopedEnv>("TWICE_PG_DIR", dir);
  }
  ~PrivateTmp() {
    pg_dir.reset();
    env.reset();
    fs::remove_all(dir);
  }
};

}  // namespace

TEST(PostgresServer, StartsAcceptsConnectionsAndLeavesNothingBehind) {
  PrivateTmp tmp;
  std::unique_ptr<PostgresServer> server;
  ASSERT_TRUE(PostgresServer::start(server).ok());
  const std::string folder = server->folder();
  const pid_t pid = server->pid();
  EXPECT_LT(folder.size() + std::string("/.s.PGSQL.5432").size(), 108u);
  EXPECT_EQ(PQping(server->conninfo("postgres").c_str()), PQPING_OK);
  EXPECT_TRUE(fs::exists(folder + "/.s.PGSQL.5432"));
  // Only a Unix socket: the server listens on no TCP port.
  std::ifstream opts(folder + "/data/postmaster.opts");
  std::string line;
  std::getline(opts, line);
  EXPECT_NE(line.find("listen_addresses="), std::string::npos) << line;
  // Dynamic shared memory and nothing else of the server's outside its folder:
  // a server killed with SIGKILL used to leave /dev/shm/PostgreSQL.* behind.
  EXPECT_NE(line.find("dynamic_shared_memory_type=mmap"), std::string::npos) << line;
  EXPECT_TRUE(fs::is_directory(folder + "/data/pg_dynshmem"));
  // No autovacuum: it would set the planner's statistics at wall-clock moments.
  EXPECT_NE(line.find("autovacuum=off"), std::string::npos) << line;
  server.reset();
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_FALSE(process_exists(pid));
}

TEST(PostgresServer, AMissingProgramIsOneClearLineAndNoFolder) {
  PrivateTmp tmp;
  const auto before = pg_folders();
  ScopedEnv env("TWICE_PG_BINDIR", "/nonexistent/bin");
  std::unique_ptr<PostgresServer> server;
  const Status s = PostgresServer::start(server);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "cannot start PostgreSQL: initdb not found; install the postgresql package (scripts/setup.sh)");
  EXPECT_EQ(server, nullptr);
  EXPECT_EQ(pg_folders(), before);
}

TEST(PostgresServer, AServerThatWillNotStartSaysWhyAndLeavesNothing) {
  PrivateTmp tmp;
  // A postgres that exits at once: initdb is real, the server is not.
  const std::string fake = fs::temp_directory_path() / "twice-fake-pg-bin";
  fs::remove_all(fake);
  fs::create_directories(fake);
  fs::permissions(fake, fs::perms::all);
  const char* real = nullptr;
  for (const char* candidate : {"/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"})
    if (fs::exists(std::string(candidate) + "/initdb")) real = candidate;
  ASSERT_NE(real, nullptr);
  fs::create_symlink(std::string(real) + "/initdb", fake + "/initdb");
  {
    std::ofstream script(fake + "/postgres");
    script << "#!/bin/sh\necho 'FATAL:  pretend the data directory is broken' >&2\nexit 1\n";
  }
  fs::permissions(fake + "/postgres", fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                          fs::perms::others_read | fs::perms::others_exec);
  const auto before = pg_folders();
  ScopedEnv env("TWICE_PG_BINDIR", fake);
  std::unique_ptr<PostgresServer> server;
  const Status s = PostgresServer::start(server);
  fs::remove_all(fake);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cannot start PostgreSQL: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("pretend the data directory is broken"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  EXPECT_EQ(pg_folders(), before);
}

// The process that started the server dies without running a destructor.
void ServerDiesWithItsProcess(int signal) {
  PrivateTmp tmp;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    std::unique_ptr<PostgresServer> server;
    if (!PostgresServer::start(server).ok()) ::_exit(3);
    const std::string line = server->folder() + " " + std::to_string(server->pid()) + "\n";
    if (::write(fds[1], line.data(), line.size()) < 0) ::_exit(4);
    for (;;) ::pause();
  }
  ::close(fds[1]);
  std::string line;
  char c;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(fds[0]);
  ASSERT_FALSE(line.empty()) << "the child could not start a server";
  const std::string folder = line.substr(0, line.find(' '));
  const pid_t server_pid = static_cast<pid_t>(std::stol(line.substr(line.find(' ') + 1)));
  ASSERT_TRUE(fs::exists(folder));
  ASSERT_TRUE(process_exists(server_pid));
  ::kill(child, signal);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(eventually([&] { return !process_exists(server_pid); })) << "server " << server_pid << " still runs";
  EXPECT_TRUE(eventually([&] { return !fs::exists(folder); })) << folder << " is still there";
}

TEST(PostgresServer, SigtermToItsProcessStopsItAndRemovesTheFolder) { ServerDiesWithItsProcess(SIGTERM); }
TEST(PostgresServer, SigkillToItsProcessStopsItAndRemovesTheFolder) { ServerDiesWithItsProcess(SIGKILL); }

// The command's own signal path: Ctrl-C (SIGINT) stops `twice run --engine
// postgres` after the cell under way (a few hundred runs), and SIGTERM ends
// it at once; either way the server and its folder are gone afterwards.
void TwiceStopsItsServerOn(int signal) {
  PrivateTmp tmp;
  const auto before = pg_folders();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execl(TWICE_BINARY, TWICE_BINARY, "run", "--engine", "postgres", "--handler", "unique-key+cas", "--scenario",
            "concurrent-duplicates", "--seeds", "300", "--no-report", "-j1", "-q", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait for its server's folder to appear, then for the socket in it.
  std::string folder;
  ASSERT_TRUE(eventually([&] {
    for (const auto& f : pg_folders())
      if (!before.count(f) && fs::exists(f + "/.s.PGSQL.5432")) folder = f;
    return !folder.empty();
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // some runs under way
  // Ctrl-C is twice's to answer only once its handler is in: sent before (a
  // loaded machine), SIGINT's default action ended twice and the test failed.
  if (signal == SIGINT) {
    ASSERT_TRUE(eventually([&] { return twice::testing::catches_sigint(child); }));
  }
  ::kill(child, signal);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (signal == SIGINT) {
    EXPECT_TRUE(WIFEXITED(status)) << status;
    // Stopped in order: the folder is gone when the process has exited.
    EXPECT_FALSE(fs::exists(folder));
  }
  EXPECT_TRUE(eventually([&] { return !fs::exists(folder); })) << folder;
  EXPECT_EQ(pg_folders(), before);
}

TEST(PostgresServer, CtrlCToTwiceRunStopsItsServer) { TwiceStopsItsServerOn(SIGINT); }
TEST(PostgresServer, SigtermToTwiceRunStopsItsServer) { TwiceStopsItsServerOn(SIGTERM); }

// Killed while initdb runs (before any server exists): initdb dies with it,
// and the guardian, started as soon as the folder was made, removes it.
TEST(PostgresServer, KilledDuringInitdbLeavesNoFolder) {
  PrivateTmp tmp;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::unique_ptr<PostgresServer> server;
    (void)PostgresServer::start(server);
    ::_exit(0);
  }
  // The folder appears, initdb is writing into it.
  ASSERT_TRUE(eventually([&] {
    for (const auto& f : pg_folders())
      if (fs::exists(f + "/data")) return true;
    return false;
  }));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(eventually([&] { return pg_folders().empty(); }));
}
