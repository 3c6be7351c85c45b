// MariadbServer and the CLI's setup errors: a throwaway server starts on a
// socket in its own folder and goes with it; a missing program, a server
// that will not start, a wrong URL: one line, exit 2, nothing left behind.
#include <gtest/gtest.h>
#include <mysql.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "../catches_sigint.h"
#include "engine/mariadb_server.h"
#include "engine_environment.h"

namespace fs = std::filesystem;

namespace twice::testing {
namespace {

using engine::MariadbServer;

// A folder of the test's own for the servers (TWICE_MARIADB_DIR), so that
// "nothing left behind" is about this test alone.
struct PrivateServerDir {
  std::string dir;
  PrivateServerDir() {
    std::string pattern = "/tmp/twice-mtest-XXXXXX";
    dir = ::mkdtemp(pattern.data());
    ::setenv("TWICE_MARIADB_DIR", dir.c_str(), 1);
  }
  ~PrivateServerDir() {
    ::unsetenv("TWICE_MARIADB_DIR");
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::set<std::string> entries() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().string());
    return out;
  }
};

}  // namespace

TEST(MariadbServer, StartsOnASocketInItsFolderAndRemovesItOnDestruction) {
  PrivateServerDir dir;
  std::unique_ptr<MariadbServer> server;
  const Status s = MariadbServer::start(server);
  ASSERT_TRUE(s.ok()) << s.to_string();
  const std::string folder = server->folder();
  EXPECT_EQ(folder.rfind(dir.dir + "/twice-mariadb-", 0), 0u) << folder;
  EXPECT_LT(server->socket().size(), 108u);
  EXPECT_TRUE(fs::exists(server->socket()));
  const pid_t pid = server->pid();
  server.reset();
  EXPECT_FALSE(fs::exists(folder));
  EXPECT_NE(::kill(pid, 0), 0);  // the server process is gone
  EXPECT_TRUE(dir.entries().empty());
}

// Servers bootstrapped at once in one /tmp collided on their temporary
// tables' names: mariadb-install-db failed ("Unknown table
// 'mysql.tmp_user_sys'") in about one start in five, four at a time, and an
// engine test went red. Each server now keeps its temporary files in its own
// folder; four start together here.
TEST(MariadbServer, ServersStartedAtOnceEachKeepTemporaryFilesInTheirOwnFolder) {
  PrivateServerDir dir;
  constexpr int kServers = 4;
  std::vector<std::unique_ptr<MariadbServer>> servers(kServers);
  std::vector<Status> started(kServers, Status::OK());
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kServers; ++i)
      threads.emplace_back([&, i] { started[static_cast<std::size_t>(i)] = MariadbServer::start(servers[static_cast<std::size_t>(i)]); });
    for (auto& t : threads) t.join();
  }
  for (int i = 0; i < kServers; ++i) {
    const auto k = static_cast<std::size_t>(i);
    ASSERT_TRUE(started[k].ok()) << "server " << i << ": " << started[k].to_string();
    MYSQL* m = mysql_init(nullptr);
    ASSERT_NE(m, nullptr);
    ASSERT_NE(mysql_real_connect(m, nullptr, "root", nullptr, nullptr, 0, servers[k]->socket().c_str(), 0), nullptr)
        << mysql_error(m);
    ASSERT_EQ(mysql_query(m, "SELECT @@tmpdir"), 0) << mysql_error(m);
    MYSQL_RES* r = mysql_store_result(m);
    ASSERT_NE(r, nullptr);
    MYSQL_ROW row = mysql_fetch_row(r);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(std::string(row[0]), servers[k]->folder() + "/tmp");
    mysql_free_result(r);
    mysql_close(m);
  }
}

TEST(MariadbServer, AMissingProgramIsOneClearLineAndNoFolder) {
  PrivateServerDir dir;
  ScopedEnv bindir("TWICE_MARIADB_BINDIR", "/nonexistent/bin");
  std::unique_ptr<MariadbServer> server;
  const Status s = MariadbServer::start(server);
  EXPECT_EQ(s.message(),
            "cannot start MariaDB: mariadb-install-db not found; install the mariadb-server package (scripts/setup.sh)");
  EXPECT_EQ(server, nullptr);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(MariadbServer, AServerThatWillNotStartSaysWhyAndLeavesNothing) {
  PrivateServerDir dir;
  // mariadb-install-db is real, mariadbd is not.
  const std::string fake = dir.dir + "-bin";
  fs::create_directories(fake);
  fs::create_symlink("/usr/bin/mariadb-install-db", fake + "/mariadb-install-db");
  {
    std::ofstream script(fake + "/mariadbd");
    script << "#!/bin/sh\necho '[ERROR] pretend the data directory is broken' >&2\nexit 1\n";
  }
  fs::permissions(fake + "/mariadbd", fs::perms::owner_all);
  ScopedEnv bindir("TWICE_MARIADB_BINDIR", fake);
  std::unique_ptr<MariadbServer> server;
  const Status s = MariadbServer::start(server);
  fs::remove_all(fake);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cannot start MariaDB: ", 0), 0u) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_EQ(server, nullptr);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(MariadbCli, SetupErrorsExitTwoWithOneLineAndLeaveNothing) {
  PrivateServerDir dir;
  const std::string run = "run --handler cas --scenario concurrent-duplicates --seeds 2 --no-report -q --scenarios-dir "
                          TWICE_SOURCE_DIR "/scenarios ";
  {
    ScopedEnv bindir("TWICE_MARIADB_BINDIR", "/nonexistent/bin");
    const auto [out, code] = twice_command(run + "--engine mariadb");
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(out,
              "twice: cannot start MariaDB: mariadb-install-db not found; install the mariadb-server package "
              "(scripts/setup.sh)\n");
  }
  {
    // Nothing listens on port 1 of the loopback.
    const auto [out, code] = twice_command(run + "--engine mariadb --engine-url mysql://root@127.0.0.1:1/x");
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(out.rfind("twice: --engine-url 'mysql://root@127.0.0.1:1/x': cannot connect to MariaDB: ", 0), 0u) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  {
    const auto [out, code] = twice_command(run + "--engine mariadb --engine-url mysql://root@/x?socket=/nonexistent/s");
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(out.rfind("twice: --engine-url 'mysql://root@/x?socket=/nonexistent/s': cannot connect to MariaDB: ", 0), 0u)
        << out;
  }
  EXPECT_TRUE(dir.entries().empty());
}

// `twice run --engine mariadb` stopped by a signal while runs are under way:
// Ctrl-C (SIGINT) after the cell under way (60 runs, to keep the test short:
// the orderly path), SIGTERM at once (its default action: the guardian's
// path, as SIGKILL's). Either way the server and its folder are gone after.
void TwiceStopsItsMariadbServerOn(int signal) {
  PrivateServerDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execl(TWICE_BINARY, TWICE_BINARY, "run", "--engine", "mariadb", "--handler", "unique-key+cas", "--scenario",
            "concurrent-duplicates", "--seeds", "60", "--no-report", "-j1", "-q", "--scenarios-dir",
            TWICE_SOURCE_DIR "/scenarios", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string folder;
  ASSERT_TRUE(eventually([&] {
    for (const auto& f : dir.entries())
      if (fs::exists(f + "/s")) folder = f;
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
  }
  EXPECT_TRUE(eventually([&] { return !fs::exists(folder); })) << folder;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(MariadbCli, CtrlCToTwiceRunStopsItsServer) { TwiceStopsItsMariadbServerOn(SIGINT); }
TEST(MariadbCli, SigtermToTwiceRunStopsItsServer) { TwiceStopsItsMariadbServerOn(SIGTERM); }

}  // namespace twice::testing
