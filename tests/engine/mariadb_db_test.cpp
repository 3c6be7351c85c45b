// MariadbDb's pieces where MariaDB differs from PostgreSQL: placeholders
// inlined as literals, error numbers -> Status, URLs, the deadlock victim.
// What both server engines must do (rows matched, the per-run reset, the
// acceptance targets of issue 10 on InnoDB, the same seed giving the same
// trace byte for byte) is server_engine_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <mysqld_error.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <utility>

#include "engine/mariadb_connection.h"
#include "engine/mariadb_db.h"
#include "engine/mariadb_protocol.h"
#include "engine_environment.h"
#include "explore/shell_quote.h"
#include "gateway/scenario.h"
#include "support.h"
#include "twice/handler.h"
#include "unique_temp_dir.h"

namespace twice::testing {

// The waits MariadbRun compares with Innodb_row_lock_current_waits: those of
// the list of transactions only. The last deadlock's report names waits too,
// long over.
TEST(MariadbStatus, LockWaitsAreCountedInTheListOfTransactionsOnly) {
  const std::string status =
      "------------------------\nLATEST DETECTED DEADLOCK\n------------------------\n"
      "*** (1) TRANSACTION:\nTRANSACTION 40, ACTIVE 0 sec starting index read\n"
      "mysql tables in use 1, locked 1\nLOCK WAIT 3 lock struct(s), heap size 1128, 2 row lock(s)\n"
      "------------\nTRANSACTIONS\n------------\nTrx id counter 52\n"
      "LIST OF TRANSACTIONS FOR EACH SESSION:\n"
      "---TRANSACTION 51, ACTIVE 0 sec starting index read\nmysql tables in use 1, locked 1\n"
      "LOCK WAIT 2 lock struct(s), heap size 1128, 1 row lock(s)\nMariaDB thread id 9, OS thread handle 1, query id 77\n"
      "---TRANSACTION 50, ACTIVE 0 sec\n2 lock struct(s), heap size 1128, 1 row lock(s)\n"
      "MariaDB thread id 8, OS thread handle 2, query id 70\n"
      "---TRANSACTION 49, ACTIVE 0 sec starting index read\n"
      "LOCK WAIT 2 lock struct(s), heap size 1128, 1 row lock(s)\nMariaDB thread id 7, OS thread handle 3, query id 75\n";
  EXPECT_EQ(engine::count_lock_waits(status), 2u);
  EXPECT_EQ(engine::count_lock_waits("LOCK WAIT 1 lock struct(s)\n"), 0u);  // no list: nothing to count
}

TEST(MariadbProtocol, PlaceholdersBecomeLiteralsOutsideQuotesAndComments) {
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT a FROM t WHERE b = ? AND c = ?", {"x", 7}),
            "SELECT a FROM t WHERE b = 'x' AND c = 7");
  EXPECT_EQ(engine::mariadb_inline_parameters("INSERT INTO t VALUES (?1, ?2, ?1)", {1.5, nullptr}),
            "INSERT INTO t VALUES (1.5, NULL, 1.5)");
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT '?', `a?`, ? -- why?\n, ? # no?\n", {1, 2}),
            "SELECT '?', `a?`, 1 -- why?\n, 2 # no?\n");
  // Quotes and backslashes cannot end the literal early.
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT ?", {"it's \\ done"}), "SELECT 'it''s \\\\ done'");
  EXPECT_EQ(engine::mariadb_inline_parameters("SELECT 'a\\'?' , ?", {3}), "SELECT 'a\\'?' , 3");
}

TEST(MariadbProtocol, ErrorNumbersBecomeTheSameStatusKindsAsPostgresql) {
  EXPECT_TRUE(engine::mariadb_status(ER_LOCK_DEADLOCK, "dl").is_deadlock());
  EXPECT_TRUE(engine::mariadb_status(ER_LOCK_WAIT_TIMEOUT, "lt").is_lock_timeout());
  EXPECT_TRUE(engine::mariadb_status(ER_DUP_ENTRY, "dup").is_constraint());
  EXPECT_TRUE(engine::mariadb_status(ER_CONSTRAINT_FAILED, "check").is_constraint());
  EXPECT_TRUE(engine::mariadb_status(ER_BAD_NULL_ERROR, "null").is_constraint());
  EXPECT_EQ(engine::mariadb_status(ER_NO_SUCH_TABLE, "no table").code(), Status::Code::kError);
  // InnoDB's 40001 under innodb_snapshot_isolation (ON by default from 11.8):
  // worth running the whole transaction again, as PostgreSQL's is.
  const Status changed = engine::mariadb_status(ER_CHECKREAD, "Record has changed since last read in table 'accounts'");
  EXPECT_TRUE(changed.is_serialization());
  EXPECT_TRUE(changed.is_retryable());
  EXPECT_EQ(changed.to_string(), "SERIALIZATION FAILURE: Record has changed since last read in table 'accounts'");
}

TEST(MariadbProtocol, UrlsNameASocketOrAHost) {
  engine::MariadbAddress a;
  std::string error;
  ASSERT_TRUE(engine::parse_mariadb_url("mysql://app:secret@db.internal:3307/pay", a, error)) << error;
  EXPECT_EQ(a.user, "app");
  EXPECT_EQ(a.password, "secret");
  EXPECT_EQ(a.host, "db.internal");
  EXPECT_EQ(a.port, 3307u);
  EXPECT_EQ(a.database, "pay");
  ASSERT_TRUE(engine::parse_mariadb_url("mysql://root@/?socket=/run/mysqld/mysqld.sock", a, error)) << error;
  EXPECT_EQ(a.socket, "/run/mysqld/mysqld.sock");
  // A password holding '@' or ':' is written percent-encoded, as in any URL.
  ASSERT_TRUE(engine::parse_mariadb_url("mysql://p%2Bc:p%40ss%3Ax@db:3306", a, error)) << error;
  EXPECT_EQ(a.user, "p+c");
  EXPECT_EQ(a.password, "p@ss:x");
  EXPECT_FALSE(engine::parse_mariadb_url("postgres://x@y/z", a, error));
  EXPECT_FALSE(engine::parse_mariadb_url("mysql://root@host:99999/x", a, error));
  // What is wrong, without the URL: the caller names it, without its password.
  EXPECT_EQ(error, "'99999' is not a port");
}

// A reset leaves every counter as the schema made it, as on a fresh database:
// a table's AUTO_INCREMENT start and a SEQUENCE of its own, both at 1000.
TEST(MariadbDatabase, AResetRestartsEveryCounterAtItsOwnStart) {
  const std::string setup =
      "CREATE SEQUENCE voucher_no START WITH 1000 MINVALUE 1000;"
      "CREATE TABLE vouchers (id BIGINT AUTO_INCREMENT PRIMARY KEY, no BIGINT NOT NULL) AUTO_INCREMENT = 1000;";
  std::unique_ptr<engine::MariadbDatabase> db;
  ASSERT_TRUE(mariadb().lease(db).ok());
  for (int run = 0; run < 3; ++run) {
    const Status s = db->prepare("counter-start", setup, {});
    ASSERT_TRUE(s.ok()) << "run " << run << ": " << s.to_string();
    ASSERT_TRUE(db->checker().exec_script("INSERT INTO vouchers (no) VALUES (NEXT VALUE FOR voucher_no)").ok());
    const Result r = db->checker().query("SELECT id, no FROM vouchers");
    ASSERT_TRUE(r.ok()) << r.status.to_string();
    ASSERT_EQ(r.rows.size(), 1u) << "run " << run;
    EXPECT_EQ(r.rows[0][0].as_int(), 1000) << "run " << run;
    EXPECT_EQ(r.rows[0][1].as_int(), 1000) << "run " << run;
  }
  mariadb().give_back(std::move(db));
}

// A task session's settings survive the reset a delivery's end makes
// (COM_RESET_CONNECTION goes back to the server's defaults; the session's own
// are applied again), at every isolation level.
TEST(MariadbDatabase, SessionSettingsSurviveTheResetAndFollowTheLevel) {
  std::unique_ptr<engine::MariadbDatabase> db;
  ASSERT_TRUE(mariadb().lease(db).ok());
  const auto settings = [](engine::MariadbSession* s) {
    std::string out;
    if (mysql_query(s->conn, "SELECT @@SESSION.tx_isolation, @@SESSION.innodb_lock_wait_timeout") != 0)
      return std::string(mysql_error(s->conn));
    MYSQL_RES* res = mysql_store_result(s->conn);
    if (MYSQL_ROW row = res ? mysql_fetch_row(res) : nullptr) out = std::string(row[0]) + " " + row[1];
    if (res) mysql_free_result(res);
    return out;
  };
  const std::vector<std::pair<engine::Isolation, std::string>> levels = {
      {engine::Isolation::kSerializable, "SERIALIZABLE 600"},
      {engine::Isolation::kReadCommitted, "READ-COMMITTED 600"},
      {engine::Isolation::kRepeatableRead, "REPEATABLE-READ 600"}};
  for (const auto& [level, expected] : levels) {
    ASSERT_TRUE(db->set_isolation(level).ok());
    engine::MariadbSession* s = nullptr;
    ASSERT_TRUE(db->acquire(s).ok());
    for (int round = 0; round < 2; ++round) {
      EXPECT_EQ(settings(s), expected) << "round " << round;
      ASSERT_EQ(mysql_query(s->conn, "SET SESSION tx_isolation = 'READ-UNCOMMITTED', SESSION innodb_lock_wait_timeout = 5"), 0);
      ASSERT_TRUE(db->forget_session_state(*s).ok());
    }
    db->release(s);
  }
  mariadb().give_back(std::move(db));
}

TEST(MariadbDatabase, ADeadlockVictimGetsTheDeadlockKind) {
  std::unique_ptr<engine::MariadbDatabase> db;
  ASSERT_TRUE(mariadb().lease(db).ok());
  auto& a = db->checker();
  ASSERT_TRUE(a.exec_script("DROP TABLE IF EXISTS acct; CREATE TABLE acct (id INT PRIMARY KEY, v INT); "
                            "INSERT INTO acct VALUES (1, 0), (2, 0)")
                  .ok());
  engine::MariadbSession* other = nullptr;
  ASSERT_TRUE(db->acquire(other).ok());
  ASSERT_TRUE(a.exec_script("START TRANSACTION; UPDATE acct SET v = 1 WHERE id = 1").ok());
  ASSERT_EQ(mysql_query(other->conn, "START TRANSACTION"), 0);
  ASSERT_EQ(mysql_query(other->conn, "UPDATE acct SET v = 2 WHERE id = 2"), 0);
  // `other` waits for row 1 (sent without waiting), then `a` closes the cycle.
  int err = 0;
  int wait = mysql_real_query_start(&err, other->conn, "UPDATE acct SET v = 2 WHERE id = 1", 34);
  const Result r = a.query("UPDATE acct SET v = 1 WHERE id = 2");
  while (wait) wait = mysql_real_query_cont(&err, other->conn, MYSQL_WAIT_READ);
  const Status theirs = err ? engine::mariadb_status(other->conn) : Status::OK();
  // InnoDB picks one victim; whichever it is, it gets kDeadlock.
  EXPECT_NE(r.status.is_deadlock(), theirs.is_deadlock()) << r.status.to_string() << " / " << theirs.to_string();
  (void)mysql_query(other->conn, "ROLLBACK");
  db->release(other);
  ASSERT_TRUE(a.exec_script("ROLLBACK; DROP TABLE acct").ok());
  mariadb().give_back(std::move(db));
}

}  // namespace twice::testing

namespace twice::testing {
namespace {

// A server named by --engine-url whose user lacks what runs need is refused
// once, up front: without PROCESS a run waited for ever (a lock wait taken for
// a slow statement), without CREATE every cell failed.
TEST(MariadbCluster, AnEngineUrlUserWithoutTheRightsRunsNeedIsRefusedUpFront) {
  const std::string socket = mariadb().server()->socket();
  std::unique_ptr<engine::MariadbConnection> root;
  engine::MariadbAddress at;
  at.socket = socket;
  ASSERT_TRUE(engine::MariadbConnection::open(at, "", root).ok());
  for (const char* user : {"twice_t_none", "twice_t_noproc", "twice_t_full"})
    ASSERT_TRUE(root->exec_script(fmt::format("DROP USER IF EXISTS '{0}'@'localhost'; CREATE USER '{0}'@'localhost' "
                                              "IDENTIFIED BY 'pw'",
                                              user))
                    .ok());
  ASSERT_TRUE(root->exec_script("GRANT ALL ON `twice\\_%`.* TO 'twice_t_noproc'@'localhost'").ok());
  ASSERT_TRUE(root->exec_script("GRANT PROCESS ON *.* TO 'twice_t_none'@'localhost'").ok());
  ASSERT_TRUE(root->exec_script("GRANT ALL ON `twice\\_%`.* TO 'twice_t_full'@'localhost'; "
                                "GRANT PROCESS ON *.* TO 'twice_t_full'@'localhost'")
                  .ok());
  const auto refusal = [&](const std::string& user) {
    engine::MariadbCluster cluster("mysql://" + user + ":pw@localhost?socket=" + socket);
    return cluster.ensure_started().message();
  };
  // Naming the server, without the password.
  EXPECT_EQ(refusal("twice_t_noproc"),
            "--engine-url 'mysql://twice_t_noproc@localhost?socket=" + socket +
                "': user twice_t_noproc@localhost may not read SHOW ENGINE INNODB STATUS, which twice reads to tell a "
                "statement waiting for a lock from a slow one: GRANT PROCESS ON *.* TO twice_t_noproc@localhost");
  EXPECT_NE(refusal("twice_t_none")
                .find("--engine-url 'mysql://twice_t_none@localhost?socket=" + socket +
                      "': user twice_t_none@localhost may not create databases"),
            std::string::npos);
  EXPECT_EQ(refusal("twice_t_full"), "");
  for (const char* user : {"twice_t_none", "twice_t_noproc", "twice_t_full"})
    EXPECT_TRUE(root->exec_script(fmt::format("DROP USER '{}'@'localhost'", user)).ok());
}

// A run on --engine-url replays only on that server: its replay command names
// the URL, and never its password (reports are CI artifacts), and runs as
// pasted where MYSQL_PWD holds the password, which Connector/C reads instead.
TEST(MariadbCluster, AnEngineUrlRunsReplayCommandNamesTheServerWithoutThePasswordAndRunsAsPasted) {
  if (mariadb().server() == nullptr) GTEST_SKIP() << "TWICE_TEST_MARIADB_URL: the test creates a user on its own server";
  const std::string socket = mariadb().server()->socket();
  std::unique_ptr<engine::MariadbConnection> root;
  engine::MariadbAddress at;
  at.socket = socket;
  ASSERT_TRUE(engine::MariadbConnection::open(at, "", root).ok());
  ASSERT_TRUE(root->exec_script("DROP USER IF EXISTS 'twice_t_replay'@'localhost'; CREATE USER "
                                "'twice_t_replay'@'localhost' IDENTIFIED BY 'p@ss w'; GRANT ALL ON `twice\\_%`.* TO "
                                "'twice_t_replay'@'localhost'; GRANT PROCESS ON *.* TO 'twice_t_replay'@'localhost'")
                  .ok());
  const std::string url = "mysql://twice_t_replay:p%40ss%20w@localhost?socket=" + socket;
  const CommandOutput run = twice_command(
      "run --engine mariadb --engine-url " + explore::shell_quote(url) +
      " --handler rmw-in-txn --scenario concurrent-topups --seeds 5 --shrink-budget 0 --show all --no-report "
      "--scenarios-dir " + explore::shell_quote(std::string(TWICE_SOURCE_DIR) + "/scenarios"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output.find("p%40ss"), std::string::npos) << run.output;
  const std::size_t from = run.output.find("replay this counterexample: twice replay ");
  ASSERT_NE(from, std::string::npos) << run.output;
  const std::size_t start = run.output.find("twice replay ", from);
  const std::string command = run.output.substr(start, run.output.find('\n', start) - start);
  EXPECT_TRUE(command.ends_with(" --engine mariadb --isolation repeatable-read --engine-url " +
                                explore::shell_quote("mysql://twice_t_replay@localhost?socket=" + socket) +
                                "  # the URL's password is not printed: set MYSQL_PWD"))
      << command;
  {
    // Pasted, with the password in the environment: the same lost update, on the same server.
    ScopedEnv password("MYSQL_PWD", "p@ss w");
    const CommandOutput replay = twice_command(command.substr(std::string("twice ").size()));
    EXPECT_EQ(replay.exit_code, 1) << replay.output;  // 1: the run shows a violation
    EXPECT_NE(replay.output.find("# verdict: lost_update"), std::string::npos) << replay.output;
    // Its header says which server told the story, without the password.
    const std::size_t server = replay.output.find("\n# on the mariadb server ");
    EXPECT_NE(server, std::string::npos) << replay.output;
    EXPECT_NE(replay.output.find(", at mysql://twice_t_replay@localhost?socket=" + socket + "\n", server),
              std::string::npos)
        << replay.output;
    EXPECT_EQ(replay.output.find("p%40ss"), std::string::npos) << replay.output;
  }
  EXPECT_TRUE(root->exec_script("DROP USER 'twice_t_replay'@'localhost'").ok());
}

// `twice stress` on a server of yours says which one, in the text and the
// JSON, as `twice run`'s reports do: the URL without its password.
TEST(MariadbCluster, StressOnAnEngineUrlNamesTheServerWithoutThePassword) {
  if (mariadb().server() == nullptr) GTEST_SKIP() << "TWICE_TEST_MARIADB_URL: the test creates a user on its own server";
  const std::string socket = mariadb().server()->socket();
  std::unique_ptr<engine::MariadbConnection> root;
  engine::MariadbAddress at;
  at.socket = socket;
  ASSERT_TRUE(engine::MariadbConnection::open(at, "", root).ok());
  ASSERT_TRUE(root->exec_script("DROP USER IF EXISTS 'twice_t_stress'@'localhost'; CREATE USER "
                                "'twice_t_stress'@'localhost' IDENTIFIED BY 'TWICE-SECRET-4711'; GRANT ALL ON "
                                "`twice\\_%`.* TO 'twice_t_stress'@'localhost'; GRANT PROCESS ON *.* TO "
                                "'twice_t_stress'@'localhost'")
                  .ok());
  const std::string url = "mysql://twice_t_stress:TWICE-SECRET-4711@localhost?socket=" + socket;
  const std::string shown = "mysql://twice_t_stress@localhost?socket=" + socket;
  const std::string json_path = (testing::unique_temp_dir() / "stress-on-url.json").string();
  const CommandOutput out = twice_command("stress --handler cas --engine mariadb --engine-url " +
                                          explore::shell_quote(url) + " --orders 20 --quiet --json " + json_path);
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output.find("TWICE-SECRET"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("\n  server       mariadb server "), std::string::npos) << out.output;
  EXPECT_NE(out.output.find(", at " + shown + "\n"), std::string::npos) << out.output;
  std::ifstream in(json_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("TWICE-SECRET"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["server"]["engine"], "mariadb");
  EXPECT_EQ(j["server"]["url"], shown);
  EXPECT_FALSE(j["server"]["version"].get<std::string>().empty());
  EXPECT_TRUE(root->exec_script("DROP USER 'twice_t_stress'@'localhost'").ok());
}

// The value of a global variable of the shared server and where it came
// from (COMPILE-TIME, COMMAND-LINE, ...); empty when the server has none.
std::pair<std::string, std::string> global_variable(const std::string& name) {
  std::unique_ptr<engine::MariadbDatabase> db;
  if (!mariadb().lease(db).ok()) return {};
  const Result r = db->checker().query(
      "SELECT GLOBAL_VALUE, GLOBAL_VALUE_ORIGIN FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = ?",
      {name});
  mariadb().give_back(std::move(db));
  if (!r.ok() || r.empty()) return {};
  return {r.rows[0][0].as_text(), r.rows[0][1].as_text()};
}

// The expected matrix was written for innodb_snapshot_isolation OFF (10.11's
// default); 11.8 turns it ON by default, so twice's own server says OFF
// itself. A server without the variable (before 10.6.18) has nothing to pin.
TEST(MariadbServer, TwicesOwnServerPinsSnapshotIsolationOff) {
  if (mariadb().server() == nullptr) GTEST_SKIP() << "TWICE_TEST_MARIADB_URL: not a server twice started";
  const auto [value, origin] = global_variable("INNODB_SNAPSHOT_ISOLATION");
  if (value.empty()) GTEST_SKIP() << "this MariaDB has no innodb_snapshot_isolation";
  EXPECT_EQ(value, "OFF");
  EXPECT_EQ(origin, "COMMAND-LINE");
}

// rmw-in-txn on a session that asks for innodb_snapshot_isolation, as every
// session does on MariaDB 11.8: the same bundled handler, one statement first.
class SnapshotIsolationRmw final : public Handler {
 public:
  Reply handle(const Notify& n, Env& env) override {
    const Result set = env.db().exec("SET SESSION innodb_snapshot_isolation = ON");
    if (!set.ok()) return Reply::fail(set.status.to_string());
    return rmw_->handle(n, env);
  }

 private:
  std::unique_ptr<Handler> rmw_ = handler("rmw-in-txn").make();
};

// Under innodb_snapshot_isolation, REPEATABLE READ's lost update becomes
// error 1020: a serialization failure that rmw-in-txn retries (it gave up with
// HTTP 500 when 1020 was a plain error), and no update is lost.
TEST(MariadbRun, ARowChangedSinceTheSnapshotIsASerializationFailureTheHandlerRetries) {
  if (global_variable("INNODB_SNAPSHOT_ISOLATION").first.empty())
    GTEST_SKIP() << "this MariaDB has no innodb_snapshot_isolation";
  const HandlerInfo info{"snapshot-rmw-in-txn", "", [] { return std::make_unique<SnapshotIsolationRmw>(); }};
  const gateway::Scenario s = bundled_scenario("concurrent-topups");
  std::string retried;
  for (std::uint64_t seed = 1; seed <= 20 && retried.empty(); ++seed) {
    run::RunSpec spec{&s, &info, {}, seed, std::nullopt};
    spec.engine = on_mariadb(engine::Isolation::kRepeatableRead);
    const run::RunResult r = run::simulate(spec).value();
    const std::string trace = trace_text(r);
    EXPECT_TRUE(r.verdict.violations.empty()) << "seed " << seed << "\n" << trace;
    EXPECT_EQ(trace.find("ERROR: Record has changed"), std::string::npos) << "seed " << seed << "\n" << trace;
    if (trace.find("-> SERIALIZATION FAILURE: Record has changed since last read") != std::string::npos) {
      retried = trace;
      EXPECT_NE(trace.find("aborted (SERIALIZATION FAILURE: Record has changed since last read"), std::string::npos)
          << trace;
    }
  }
  EXPECT_FALSE(retried.empty()) << "no seed of 1..20 wrote a row changed since its snapshot";
}

}  // namespace
}  // namespace twice::testing
