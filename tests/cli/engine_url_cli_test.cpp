// An --engine-url's password never reaches what twice prints or writes
// (CI logs and report artifacts are often public): every way the URL can
// fail, on every command that takes it, with a password that is a unique
// marker. Server-free: a socket folder nobody serves, a closed port, URLs
// that do not parse. The error still names the server, user@host/db.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../unique_temp_dir.h"
#include "run_twice.h"

namespace {

namespace fs = std::filesystem;
using twice::testing::twice;

constexpr std::string_view kSecret = "TWICE-SECRET-4711";

// `text` single-quoted for the shell run_twice() hands the command to.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A TCP port on loopback nobody listens on: bound, then closed.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), size);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A folder of its own for each case: its files are what the run wrote.
fs::path fresh_folder(const std::string& name) {
  const fs::path dir = twice::testing::unique_temp_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Every file under `dir`, read whole, that shows the secret.
std::vector<std::string> files_showing_the_secret(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find(kSecret) != std::string::npos) out.push_back(entry.path().string());
  }
  return out;
}

struct Case {
  std::string name;
  std::string engine;    // the --engine given
  std::string url;       // with kSecret for its password
  std::string names;     // what the one line says of the server, without the password
};

// The ways an --engine-url fails before any cell runs.
std::vector<Case> failing_urls() {
  const std::string empty = fresh_folder("no-server").string();  // no socket in it: nothing answers
  const std::string port = std::to_string(closed_port());
  return {
      {"postgres-no-socket", "postgres", "postgresql://app:TWICE-SECRET-4711@/pay?host=" + empty,
       "--engine-url 'postgresql://app@/pay?host=" + empty + "': cannot connect to PostgreSQL: "},
      {"postgres-closed-port", "postgres", "postgresql://app:TWICE-SECRET-4711@127.0.0.1:" + port + "/pay",
       "--engine-url 'postgresql://app@127.0.0.1:" + port + "/pay': cannot connect to PostgreSQL: "},
      {"postgres-password-parameter", "postgres", "postgresql://app@127.0.0.1:" + port + "/pay?password=TWICE-SECRET-4711",
       "--engine-url 'postgresql://app@127.0.0.1:" + port + "/pay': cannot connect to PostgreSQL: "},
      // libpq echoes a URI it cannot read, whole.
      {"postgres-unreadable", "postgres", "postgresql://app:TWICE-SECRET-4711@[::1]x/pay",
       "--engine-url 'postgresql://app@[::1]x/pay' is not a PostgreSQL URL: unexpected character"},
      // A '/' in the password: libpq reads its first part as the port, and says so.
      {"postgres-slash-in-password", "postgres", "postgresql://app:TWICE/SECRET-4711@127.0.0.1/pay",
       "--engine-url 'postgresql://app@127.0.0.1/pay': cannot connect to PostgreSQL: invalid integer value \"***\""},
      {"postgres-given-to-mariadb", "mariadb", "postgresql://app:TWICE-SECRET-4711@db.internal/pay",
       "--engine-url 'postgresql://app@db.internal/pay' is not a MariaDB URL"},
      {"mariadb-no-socket", "mariadb", "mysql://app:TWICE-SECRET-4711@/pay?socket=" + empty + "/s",
       "--engine-url 'mysql://app@/pay?socket=" + empty + "/s': cannot connect to MariaDB: "},
      {"mariadb-closed-port", "mariadb", "mysql://app:TWICE-SECRET-4711@127.0.0.1:" + port + "/pay",
       "--engine-url 'mysql://app@127.0.0.1:" + port + "/pay': cannot connect to MariaDB: "},
      {"mariadb-unknown-parameter", "mariadb", "mysql://app@db.internal/pay?pass=TWICE-SECRET-4711",
       "--engine-url 'mysql://app@db.internal/pay': the only option is ?socket=/path"},
      {"mariadb-slash-in-password", "mariadb", "mysql://app:TWICE/SECRET-4711@db.internal/pay",
       "--engine-url 'mysql://app@db.internal/pay': '***' is not a port"},
      {"mariadb-given-to-postgres", "postgres", "mysql://app:TWICE-SECRET-4711@db.internal/pay",
       "--engine-url 'mysql://app@db.internal/pay' is not a PostgreSQL URL"},
      // A mistyped scheme, without "://": its password was printed whole.
      {"postgres-no-double-slash", "postgres", "postgres//app:TWICE-SECRET-4711@localhost",
       "--engine-url 'postgres//app@localhost' is not a PostgreSQL URL"},
      {"postgres-one-slash", "postgres", "postgres:/app:TWICE-SECRET-4711@localhost/pay",
       "--engine-url 'postgres:/app@localhost/pay' is not a PostgreSQL URL"},
      {"mariadb-no-slashes", "mariadb", "mysql:app:TWICE-SECRET-4711@localhost",
       "--engine-url 'mysql@localhost' is not a MariaDB URL"},
  };
}

// `twice run`: one line on stderr naming the server, exit 2, and no report
// or JSON that shows the password.
TEST(EngineUrlPassword, RunNeverPrintsIt) {
  for (const Case& c : failing_urls()) {
    const fs::path out = fresh_folder("run-" + c.name);
    const auto o = twice(fmt::format("run --handler cas --scenario concurrent-duplicates --seeds 2 --engine {} "
                                     "--engine-url {} --json {} --report-dir {}",
                                     c.engine, quoted(c.url), quoted((out / "r.json").string()),
                                     quoted((out / "reports").string())));
    EXPECT_EQ(o.exit_code, 2) << c.name << ": " << o.out;
    EXPECT_EQ(o.out.find(kSecret), std::string::npos) << c.name << ": " << o.out;
    EXPECT_TRUE(o.out.starts_with("twice: " + c.names)) << c.name << ": " << o.out;
    EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << c.name << ": " << o.out;
    EXPECT_EQ(files_showing_the_secret(out), std::vector<std::string>{}) << c.name;
  }
}

TEST(EngineUrlPassword, ReplayNeverPrintsIt) {
  for (const Case& c : failing_urls()) {
    const auto o = twice(fmt::format("replay --handler cas --scenario concurrent-duplicates --seed 1 --engine {} "
                                     "--engine-url {}",
                                     c.engine, quoted(c.url)));
    EXPECT_EQ(o.exit_code, 2) << c.name << ": " << o.out;
    EXPECT_EQ(o.out.find(kSecret), std::string::npos) << c.name << ": " << o.out;
    EXPECT_TRUE(o.out.starts_with("twice: " + c.names)) << c.name << ": " << o.out;
  }
}

// `twice stress`: the text, stderr and --json (a file, and "-").
TEST(EngineUrlPassword, StressNeverPrintsIt) {
  for (const Case& c : failing_urls()) {
    const fs::path out = fresh_folder("stress-" + c.name);
    auto o = twice(fmt::format("stress --handler cas --deliveries 10 --engine {} --engine-url {} --json {}", c.engine,
                               quoted(c.url), quoted((out / "s.json").string())));
    EXPECT_EQ(o.exit_code, 2) << c.name << ": " << o.out;
    EXPECT_EQ(o.out.find(kSecret), std::string::npos) << c.name << ": " << o.out;
    EXPECT_TRUE(o.out.starts_with("twice: stress: " + c.names)) << c.name << ": " << o.out;
    EXPECT_EQ(files_showing_the_secret(out), std::vector<std::string>{}) << c.name;
    o = twice(fmt::format("stress --handler cas --deliveries 10 --engine {} --engine-url {} --json -", c.engine,
                          quoted(c.url)));
    EXPECT_EQ(o.out.find(kSecret), std::string::npos) << c.name << ": " << o.out;
  }
}

// CLI11 quotes an argument it does not expect whole: an --engine-url given
// to a command that does not take it, or after a misspelt flag.
TEST(EngineUrlPassword, AMisplacedUrlIsNotPrintedWithIt) {
  const std::string url = "postgresql://app:TWICE-SECRET-4711@db.internal/pay";
  auto o = twice("list --engine-url " + quoted(url));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(o.out,
            "twice: twice list does not take --engine-url postgresql://app@db.internal/pay; --engine-url is an option "
            "of run, replay, stress (see twice list --help)\n");
  o = twice("run --engine postgres --engine-ur " + quoted(url));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(o.out.find(kSecret), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("postgresql://app@db.internal/pay"), std::string::npos) << o.out;
  o = twice("run --engine " + quoted(url));
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_EQ(o.out.find(kSecret), std::string::npos) << o.out;
}

}  // namespace
