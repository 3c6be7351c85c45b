// Black-box mode's pieces, each against a fixed answer: the loopback guard,
// the oracle file's errors, the wire formats' building blocks, and whole runs
// against a small service played in this process (cpp-httplib's server) on a
// SQLite file: retries on the compressed clock, lost requests and acks,
// a service that double-credits. The Python tests beside this file check the
// signatures with an independent implementation and the demo shop end to end.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sqlite3.h>

#include "blackbox/blackbox_run.h"
#include "blackbox/http_post.h"
#include "blackbox/loopback.h"
#include "blackbox/oracle_file.h"
#include "blackbox/query_server.h"
#include "blackbox/service_database.h"
#include "blackbox/wire_format.h"
#include "blackbox/wire_keys.h"
#include "engine/pg_connection.h"
#include "engine/postgres_server.h"
#include "unique_temp_dir.h"

namespace twice::blackbox {
namespace {

namespace fs = std::filesystem;

fs::path folder(const std::string& name) {
  const fs::path p = twice::testing::unique_temp_dir() / "blackbox" / name;
  fs::create_directories(p);
  return p;
}

TEST(Loopback, AcceptsLoopbackEndpoints) {
  for (const char* url : {"http://127.0.0.1:8080/notify", "http://localhost:9/", "http://[::1]:8080/a/b", "http://127.1.2.3/x"}) {
    StatusOr<HttpEndpoint> e = parse_endpoint(url);
    EXPECT_TRUE(e.ok()) << url << ": " << e.status().message();
  }
  StatusOr<HttpEndpoint> e = parse_endpoint("http://[::1]:8080/a/b");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, 8080);
  EXPECT_EQ(e->path, "/a/b");
  EXPECT_EQ(parse_endpoint("http://127.0.0.1").value().path, "/");
  EXPECT_EQ(parse_endpoint("http://127.0.0.1").value().port, 80);
}

TEST(Loopback, RefusesEverythingElseWithOneLine) {
  for (const char* url : {"http://10.0.0.1:8080/notify", "http://192.168.1.5/", "http://pay.example/notify",
                          "http://0.0.0.0:80/", "https://127.0.0.1/notify", "ftp://127.0.0.1/", "http://127.0.0.1:0/",
                          "http://127.0.0.1:99999/", "http://user@127.0.0.1/", "http://[::2]:80/"}) {
    StatusOr<HttpEndpoint> e = parse_endpoint(url);
    ASSERT_FALSE(e.ok()) << url;
    EXPECT_NE(e.status().message().find(url), std::string::npos) << e.status().message();
    EXPECT_EQ(e.status().message().find('\n'), std::string::npos);
  }
  EXPECT_NE(parse_endpoint("http://10.0.0.1/").status().message().find("only loopback"), std::string::npos);
}

TEST(Loopback, DatabaseUrlsMustBeLocal) {
  for (const char* ok : {"shop.sqlite", "/tmp/x.db", "postgres://u@localhost/shop", "postgres:///shop?host=/tmp",
                         "postgresql://u:p@127.0.0.1:5432/shop", "mysql://root@127.0.0.1:3306/shop",
                         "mysql://root@/shop?socket=/run/mysqld.sock", "postgres://u@[::1]/shop"})
    EXPECT_TRUE(check_database_is_local(ok).ok()) << ok;
  for (const char* bad : {"postgres://u@db.internal/shop", "mysql://root@10.1.2.3:3306/shop",
                          "postgres:///shop?host=db.internal", "postgresql://u@192.168.0.2/shop"})
    EXPECT_FALSE(check_database_is_local(bad).ok()) << bad;
}

// Every address libpq would contact, not only the first: hostaddr= wins over
// host=, a multi-host list is tried in turn, percent-encoding is decoded.
TEST(Loopback, EveryAddressOfADatabaseUrlIsChecked) {
  for (const char* ok : {"postgres://u@[::1]:5432,127.0.0.1:5433/db", "postgres://u@/db?hostaddr=127.0.0.1&port=5432",
                         "postgres://u@localhost/db?host=%2Ftmp%2Fpg", "postgres://u@/db?host=/tmp,127.0.0.1",
                         "postgres://u@%6Cocalhost/db"})
    EXPECT_TRUE(check_database_is_local(ok).ok()) << ok << ": " << check_database_is_local(ok).message();
  for (const char* bad : {"postgres://u@/db?hostaddr=192.0.2.2&port=15432", "postgres://u@[::1]:15432,192.0.2.2:15432/db",
                          "postgres://u@localhost/db?hostaddr=192.0.2.2", "postgres://u@/db?host=/tmp,192.0.2.2",
                          "postgres://u@%31%39%32.0.2.2/db", "postgres://u@/db?h%6Fst=192.0.2.2",
                          "postgres://u@/db?service=prod", "postgres://u@127.0.0.1/db?hostaddr=,192.0.2.2"}) {
    const Status s = check_database_is_local(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("--db"), std::string::npos) << s.message();
  }
}

// Where the URL names no address, libpq and MariaDB read the environment.
TEST(Loopback, TheEnvironmentADatabaseClientFallsBackOnIsChecked) {
  ::setenv("PGHOSTADDR", "192.0.2.2", 1);
  EXPECT_FALSE(check_database_is_local("postgres://u@/db").ok());
  EXPECT_TRUE(check_database_is_local("postgres://u@/db?hostaddr=127.0.0.1").ok());
  ::unsetenv("PGHOSTADDR");
  ::setenv("PGHOST", "db.internal", 1);
  EXPECT_FALSE(check_database_is_local("postgres:///db").ok());
  EXPECT_TRUE(check_database_is_local("postgres://u@localhost/db").ok());
  ::unsetenv("PGHOST");
  ::setenv("PGSERVICE", "prod", 1);
  EXPECT_FALSE(check_database_is_local("postgres://u@localhost/db").ok());
  ::unsetenv("PGSERVICE");
  ::setenv("MYSQL_HOST", "10.1.2.3", 1);
  EXPECT_FALSE(check_database_is_local("mysql://root@/shop").ok());
  EXPECT_TRUE(check_database_is_local("mysql://root@/shop?socket=/run/m.sock").ok());
  ::unsetenv("MYSQL_HOST");
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

constexpr const char* kOracle = R"TOML(setup_sql = """
DROP TABLE IF EXISTS ledger; DROP TABLE IF EXISTS accounts; DROP TABLE IF EXISTS orders; DROP TABLE IF EXISTS seen;
CREATE TABLE orders (order_no TEXT PRIMARY KEY, user_id TEXT, amount INTEGER, currency TEXT, status TEXT DEFAULT 'WAIT_PAY');
CREATE TABLE accounts (user_id TEXT PRIMARY KEY, balance INTEGER NOT NULL DEFAULT 0);
CREATE TABLE ledger (id INTEGER PRIMARY KEY, order_no TEXT, user_id TEXT, amount INTEGER);
CREATE TABLE seen (transaction_id TEXT PRIMARY KEY);
"""
insert_order_sql = "INSERT INTO orders (order_no, user_id, amount, currency) VALUES (?1, ?2, ?3, ?4)"
insert_account_sql = "INSERT INTO accounts (user_id) VALUES (?1)"
credits_sql = "SELECT o.order_no, COUNT(l.id) FROM orders o LEFT JOIN ledger l ON l.order_no = o.order_no GROUP BY o.order_no"
balances_sql = "SELECT a.user_id, a.balance, COALESCE((SELECT SUM(amount) FROM ledger l WHERE l.user_id = a.user_id), 0) FROM accounts a"
statuses_sql = "SELECT order_no, status FROM orders"
[states]
paid = "PAID"
)TOML";

TEST(OracleFile, ReadsTheQueries) {
  const fs::path p = folder("oracle") / "good.toml";
  write(p, kOracle);
  StatusOr<Schema> s = load_oracle(p.string());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->setup_sql.find("CREATE TABLE seen"), std::string::npos);
  EXPECT_EQ(s->statuses_sql, "SELECT order_no, status FROM orders");
  EXPECT_TRUE(s->refunds_sql.empty());
  EXPECT_EQ(s->setup_sql_for(Engine::kPostgres), s->setup_sql);
  EXPECT_EQ(s->states.paid, "PAID");
}

TEST(OracleFile, ErrorsNameFileLineAndFix) {
  const fs::path dir = folder("oracle");
  struct Case {
    std::string text, expected;
  };
  for (const Case& c : std::vector<Case>{
           {"credits_sql = \"x\"\nbalnces_sql = \"y\"\n", "bad.toml:2: unknown key 'balnces_sql'; known: "},
           {"setup_sql = 3\n", "bad.toml:1: setup_sql must be a string"},
           {"setup_sql = \"x\"\ncredits_sql = \n", "bad.toml:2: "},
           {"setup_sql = \"x\"\n", "insert_order_sql is missing"},
           {"[states]\npayed = \"P\"\n", "bad.toml:2: unknown state 'payed'"},
       }) {
    write(dir / "bad.toml", c.text);
    StatusOr<Schema> s = load_oracle((dir / "bad.toml").string());
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.status().message().find(c.expected), std::string::npos) << s.status().message();
    EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
  }
  StatusOr<Schema> missing = load_oracle((dir / "nope.toml").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.toml"), std::string::npos);
}

TEST(WireFormat, BuildingBlocksMatchKnownAnswers) {
  // RFC 4231, test case 2.
  std::string hex;
  for (unsigned char c : hmac_sha256("Jefe", "what do ya want for nothing?")) hex += fmt::format("{:02x}", c);
  EXPECT_EQ(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(yuan(12000), "120.00");
  EXPECT_EQ(yuan(5), "0.05");
  EXPECT_EQ(yuan(123456), "1234.56");
  EXPECT_EQ(form_escape("2026-01-01 08:00:00"), "2026-01-01%2008%3A00%3A00");
  EXPECT_EQ(form_escape("a+b=c&d/订"), "a%2Bb%3Dc%26d%2F%E8%AE%A2");
}

Notify paid_notify(const std::string& profile, const std::string& event_type) {
  Notify n;
  n.event_id = "evt-O-1";
  n.out_trade_no = "O-1";
  n.transaction_id = "4200000001";
  n.amount = 12000;
  n.currency = "CNY";
  n.event_type = event_type;
  n.gateway = profile;
  return n;
}

TEST(WireFormat, EachProfileSaysWhatItsGatewaySays) {
  WireKeys keys;
  ASSERT_TRUE(load_or_create_keys(folder("run-keys").string(), keys).ok());
  const std::string nonce = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345";
  StatusOr<WireRequest> stripe = encode(paid_notify("stripe", "payment_intent.succeeded"), "stripe", keys, 1767225600, nonce, false);
  ASSERT_TRUE(stripe.ok());
  ASSERT_EQ(stripe->headers.size(), 1u);
  EXPECT_EQ(stripe->headers[0].first, "Stripe-Signature");
  std::string hex;
  for (unsigned char c : hmac_sha256(keys.stripe_secret, "1767225600." + stripe->body)) hex += fmt::format("{:02x}", c);
  EXPECT_EQ(stripe->headers[0].second, "t=1767225600,v1=" + hex);
  const auto event = nlohmann::json::parse(stripe->body);
  EXPECT_EQ(event["data"]["object"]["amount"], 12000);
  EXPECT_EQ(event["data"]["object"]["currency"], "cny");

  StatusOr<WireRequest> alipay = encode(paid_notify("alipay", "TRADE_SUCCESS"), "alipay", keys, 1767225600, nonce, false);
  ASSERT_TRUE(alipay.ok());
  EXPECT_NE(alipay->body.find("total_amount=120.00"), std::string::npos);
  EXPECT_NE(alipay->body.find("sign_type=RSA2"), std::string::npos);
  EXPECT_NE(alipay->body.find("trade_status=TRADE_SUCCESS"), std::string::npos);

  StatusOr<WireRequest> wechat = encode(paid_notify("wechat-v3", "TRANSACTION.SUCCESS"), "wechat-v3", keys, 1767225600, nonce, false);
  ASSERT_TRUE(wechat.ok());
  const auto w = nlohmann::json::parse(wechat->body);
  EXPECT_EQ(w["resource"]["algorithm"], "AEAD_AES_256_GCM");
  EXPECT_EQ(wechat->body.find("out_trade_no"), std::string::npos) << "the transaction travels encrypted";

  StatusOr<WireRequest> adyen = encode(paid_notify("adyen", "AUTHORISATION"), "adyen", keys, 1767225600, nonce, false);
  ASSERT_TRUE(adyen.ok());
  const auto a = nlohmann::json::parse(adyen->body);
  EXPECT_EQ(a["notificationItems"][0]["NotificationRequestItem"]["amount"]["value"], 12000);

  // A forged notify differs only in its signature.
  StatusOr<WireRequest> forged = encode(paid_notify("stripe", "payment_intent.succeeded"), "stripe", keys, 1767225600, nonce, true);
  EXPECT_EQ(forged->body, stripe->body);
  EXPECT_NE(forged->headers[0].second, stripe->headers[0].second);
  EXPECT_FALSE(encode(paid_notify("wechat-v2", "X"), "wechat-v2", keys, 1, nonce, false).ok());
}

TEST(WireKeys, ASecondLoadReadsTheSameKeys) {
  const std::string dir = folder("keys-again").string();
  WireKeys first, second;
  ASSERT_TRUE(load_or_create_keys(dir, first).ok());
  ASSERT_TRUE(load_or_create_keys(dir, second).ok());
  EXPECT_EQ(first.stripe_secret, second.stripe_secret);
  EXPECT_EQ(first.wechat_apiv3_key.size(), 32u);
  EXPECT_EQ(EVP_PKEY_eq(first.alipay.get(), second.alipay.get()), 1);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "alipay_public_key.pem"));
  EXPECT_TRUE(fs::exists(fs::path(dir) / "wechatpay_platform_public.pem"));
}

// A service in this process: a Stripe endpoint on a free loopback port that
// credits the order named by each notify in the SQLite file, once (or at
// every copy, when `double_credits`), after failing the first `fail_first`
// requests with HTTP 500. Its requests are served one at a time.
class FakeService {
 public:
  // `query_port` > 0: before crediting, ask twice's query API whether the
  // PaymentIntent succeeded (a forged notify's does not exist), as a careful
  // service asks its gateway.
  FakeService(std::string db, int fail_first, bool double_credits, int query_port = 0)
      : db_(std::move(db)), fail_first_(fail_first), double_credits_(double_credits), query_port_(query_port) {
    server_.Post("/notify", [this](const httplib::Request& req, httplib::Response& res) { serve(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would be lost, and the join would wait forever.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeService() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  int requests() const { return requests_; }

 private:
  void serve(const httplib::Request& req, httplib::Response& res) {
    if (++requests_ <= fail_first_) {
      res.status = 500;
      return;
    }
    const auto event = nlohmann::json::parse(req.body);
    const std::string order = event["data"]["object"]["metadata"]["order_no"];
    const std::int64_t amount = event["data"]["object"]["amount"];
    if (query_port_ > 0) {
      httplib::Client gateway("127.0.0.1", query_port_);
      const std::string id = event["data"]["object"]["id"];
      const auto answer = gateway.Get("/v1/payment_intents/" + id);
      if (!answer || answer->status != 200 || nlohmann::json::parse(answer->body)["status"] != "succeeded") {
        res.status = 401;
        return;
      }
    }
    std::lock_guard lock(mutex_);
    // Credits only an order still waiting, unless it is the double-crediting kind.
    const std::string waiting = double_credits_ ? "" : " AND status = 'WAIT_PAY'";
    const std::string sql = fmt::format(
        "BEGIN;"
        "INSERT INTO ledger (order_no, user_id, amount) SELECT order_no, user_id, {1} FROM orders WHERE order_no = '{0}'{2};"
        "UPDATE accounts SET balance = balance + {1} WHERE user_id = (SELECT user_id FROM orders WHERE order_no = '{0}'{2});"
        "UPDATE orders SET status = 'PAID' WHERE order_no = '{0}';"
        "COMMIT;",
        order, amount, waiting);
    if (db_.starts_with("postgres")) {
      std::unique_ptr<engine::PgConnection> pg;
      if (engine::PgConnection::open(db_, pg).ok()) (void)pg->exec_script(sql);
    } else {
      sqlite3* c = nullptr;
      sqlite3_open(db_.c_str(), &c);
      sqlite3_busy_timeout(c, 5000);
      sqlite3_exec(c, sql.c_str(), nullptr, nullptr, nullptr);
      sqlite3_close(c);
    }
    res.status = 200;
  }

  std::string db_;
  int fail_first_;
  bool double_credits_;
  int query_port_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> requests_{0};
  std::mutex mutex_;
};

struct RunFixture {
  // `db`: the service's database; empty: a SQLite file in the test's folder.
  explicit RunFixture(const std::string& name, std::string database = {}, std::string oracle = kOracle)
      : dir(folder(name)), db_url(database.empty() ? (dir / "shop.sqlite").string() : std::move(database)) {
    write(dir / "oracle.toml", oracle);
    schema = load_oracle((dir / "oracle.toml").string()).value();
    // One keys folder for every run test: RSA keys are made once, then read.
    EXPECT_TRUE(load_or_create_keys(folder("run-keys").string(), keys).ok());
    const Status opened = ServiceDatabase::open(db_url, db);
    EXPECT_TRUE(opened.ok()) << opened.message();
    scenario.name = name;
    scenario.profile = "stripe";
    gateway::OrderSpec o;
    o.order_no = "O-1";
    o.user = "alice";
    o.amount = 12000;
    scenario.orders.push_back(o);
  }
  BlackboxOptions options(int port) {
    BlackboxOptions o;
    o.endpoint = parse_endpoint(fmt::format("http://127.0.0.1:{}/notify", port)).value();
    o.scenario = &scenario;
    o.schema = &schema;
    o.database = db.get();
    o.keys = &keys;
    o.time_scale = 1e6;  // Stripe's retries (1 min, 2 min, ...) in tens of microseconds
    o.quiet_period = 10 * kMillisecond;
    o.min_timeout = kSecond;  // the fake answers in microseconds; a loaded machine may still take a while
    return o;
  }
  fs::path dir;
  std::string db_url;
  Schema schema;
  WireKeys keys;
  std::unique_ptr<ServiceDatabase> db;
  gateway::Scenario scenario;
};

TEST(BlackboxRun, RetriesOnTheProfilesScheduleUntilAcked) {
  RunFixture f("retries");
  FakeService service((f.dir / "shop.sqlite").string(), /*fail_first=*/3, /*double_credits=*/false);
  StatusOr<BlackboxRun> r = run_blackbox(f.options(service.port()));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->verdict.violations.empty());
  ASSERT_EQ(r->payments.size(), 1u);
  EXPECT_EQ(r->payments[0].attempts, 4);
  EXPECT_TRUE(r->payments[0].acked);
  EXPECT_EQ(r->requests, 4);
  EXPECT_EQ(r->answered, 4);
  EXPECT_EQ(r->acks, 1);
}

TEST(BlackboxRun, AServiceThatNeverAcksIsRetriedToTheEndOfTheSchedule) {
  RunFixture f("never-acks");
  f.scenario.max_attempts = 5;
  FakeService service((f.dir / "shop.sqlite").string(), /*fail_first=*/1000, false);
  StatusOr<BlackboxRun> r = run_blackbox(f.options(service.port()));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->payments[0].attempts, 5);
  EXPECT_FALSE(r->payments[0].acked);
  // Never credited, never acked: the gateway still settled it.
  ASSERT_EQ(r->verdict.violations.size(), 1u);
  EXPECT_EQ(r->verdict.violations[0].invariant, "lost_payment");
}

// A scenario's [gateway] retry_intervals are the schedule black-box mode
// plays too: a service that never acks gets one attempt per wait, plus the
// first, where Stripe's default schedule would make 15.
TEST(BlackboxRun, TheScenariosRetryIntervalsAreTheSchedulePlayed) {
  RunFixture f("gateway-intervals");
  f.scenario.gateway.retry_intervals = std::vector<Micros>{kMinute, 2 * kMinute};
  FakeService service((f.dir / "shop.sqlite").string(), /*fail_first=*/1000, false);
  StatusOr<BlackboxRun> r = run_blackbox(f.options(service.port()));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->payments[0].attempts, 3);
  EXPECT_EQ(service.requests(), 3);
  EXPECT_EQ(r->fault_plan.size(), 3u);
}

// ... and its timeout is the request timeout, compressed like the profile's.
TEST(BlackboxRun, TheScenariosTimeoutIsTheRequestTimeout) {
  RunFixture f("gateway-timeout");
  BlackboxOptions o = f.options(9);  // nothing is sent
  o.time_scale = 1.0;
  o.min_timeout = kMillisecond;
  EXPECT_EQ(request_timeout(o), 15 * kSecond) << "Stripe's default";
  f.scenario.gateway.timeout = 3 * kSecond;
  EXPECT_EQ(request_timeout(o), 3 * kSecond);
  o.time_scale = 100.0;
  EXPECT_EQ(request_timeout(o), 30 * kMillisecond);
}

TEST(BlackboxRun, LostAcksAreRetriedAndDuplicatesCaught) {
  RunFixture f("lost-acks");
  f.scenario.ack_loss = 1.0;  // every answer lost: each attempt of the schedule goes out
  f.scenario.max_attempts = 3;
  FakeService service((f.dir / "shop.sqlite").string(), 0, /*double_credits=*/true);
  BlackboxOptions o = f.options(service.port());
  o.min_timeout = 300 * kMillisecond;  // each lost ack costs one timeout
  StatusOr<BlackboxRun> r = run_blackbox(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(service.requests(), 3);
  EXPECT_FALSE(r->payments[0].acked);
  ASSERT_FALSE(r->verdict.violations.empty());
  EXPECT_EQ(r->verdict.violations[0].invariant, "double_credit");
  EXPECT_NE(r->verdict.violations[0].detail.find("3 times"), std::string::npos) << r->verdict.violations[0].detail;
}

TEST(BlackboxRun, TheSeedFixesTheFaultPlan) {
  RunFixture f("fault-plan");
  f.scenario.duplicate = 0.5;
  f.scenario.max_copies = 3;
  f.scenario.request_loss = 0.3;
  f.scenario.max_attempts = 4;
  for (int i = 2; i <= 6; ++i) {
    gateway::OrderSpec o = f.scenario.orders[0];
    o.order_no = fmt::format("O-{}", i);
    f.scenario.orders.push_back(o);
  }
  FakeService service((f.dir / "shop.sqlite").string(), 0, false);
  BlackboxOptions o = f.options(service.port());
  o.min_timeout = 200 * kMillisecond;  // a lost request costs one timeout
  // Each notification's first attempt is always made: its draws must be the
  // seed's alone. (Whether later attempts are made depends on the service's
  // speed, so only first attempts are compared.)
  std::vector<std::vector<std::string>> first_attempts;
  for (std::uint64_t seed : {7u, 7u, 8u}) {
    o.seed = seed;
    StatusOr<BlackboxRun> r = run_blackbox(o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::vector<std::string> firsts;
    for (const auto& line : r->fault_plan)
      if (line.find(" attempt 1:") != std::string::npos) firsts.push_back(line);
    EXPECT_EQ(firsts.size(), 6u);
    first_attempts.push_back(firsts);
  }
  EXPECT_EQ(first_attempts[0], first_attempts[1]);
  EXPECT_NE(first_attempts[0], first_attempts[2]) << "seeds 7 and 8 drew the same plan; pick another pair";
  std::string shown;
  for (const auto& line : first_attempts[0]) shown += line + "\n";
  EXPECT_NE(shown.find("lost"), std::string::npos) << shown;
  EXPECT_NE(shown.find("cop"), std::string::npos) << shown;
}

TEST(BlackboxRun, NothingListeningIsAnErrorNotAVerdict) {
  RunFixture f("refused");
  int port = 0;
  {
    FakeService gone((f.dir / "shop.sqlite").string(), 0, false);
    port = gone.port();
  }
  f.scenario.max_attempts = 2;
  StatusOr<BlackboxRun> r = run_blackbox(f.options(port));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nothing listens"), std::string::npos) << r.status().message();
}

// A service at the socket level, for answers no HTTP server library would
// give: each connection is handed to `answer` (on its own thread) after the
// request's headers have arrived.
class RawService {
 public:
  explicit RawService(std::function<void(int fd)> answer) : answer_(std::move(answer)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listener_, 16);
    socklen_t size = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &size);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd < 0) return;
        connections_.emplace_back([this, fd] {
          std::string seen;
          char buffer[4096];
          while (seen.find("\r\n\r\n") == std::string::npos) {
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            seen.append(buffer, static_cast<std::size_t>(n));
          }
          answer_(fd);
          ::close(fd);
        });
      }
    });
  }
  ~RawService() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    thread_.join();
  }
  HttpEndpoint endpoint() const { return parse_endpoint(fmt::format("http://127.0.0.1:{}/notify", port_)).value(); }

 private:
  std::function<void(int)> answer_;
  int listener_ = -1;
  int port_ = 0;
  std::vector<std::jthread> connections_;  // joined before thread_ ends: declared after it would be too late
  std::thread thread_;
};

void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

WireRequest small_request() {
  WireRequest r;
  r.content_type = "application/json";
  r.body = R"({"id":"evt-1"})";
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A fast broken answer is told from a timeout, and says what was wrong.
TEST(HttpPost, ABrokenAnswerIsNotATimeout) {
  struct Case {
    const char* name;
    std::function<void(int)> answer;
    const char* said;
  };
  const std::vector<Case> cases = {
      {"not HTTP", [](int fd) { send_all(fd, "SSH-2.0-OpenSSH_9.2\r\n"); }, "not an HTTP answer"},
      {"closed at once", [](int) {}, "closed the connection without answering"},
      {"cut mid-body", [](int fd) { send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"); },
       "3 bytes into a body of 100"},
      {"reset", [](int fd) {
         linger l{1, 0};
         ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
       }, "reset"},
  };
  for (const auto& c : cases) {
    RawService service(c.answer);
    const auto start = std::chrono::steady_clock::now();
    const HttpOutcome out = post(service.endpoint(), small_request(), 5 * kSecond);
    EXPECT_EQ(out.kind, HttpOutcome::Kind::kBroken) << c.name << ": " << out.error;
    EXPECT_NE(out.error.find(c.said), std::string::npos) << c.name << ": " << out.error;
    EXPECT_LT(seconds_since(start), 4.0) << c.name << ": waited for the timeout";
  }
}

// One deadline for the whole request: an answer trickled a byte at a time is cut there.
TEST(HttpPost, TheTimeoutIsForTheWholeRequestNotEachRead) {
  std::atomic<bool> stop{false};
  RawService service([&](int fd) {
    for (const char c : std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")) {
      if (stop) return;
      send_all(fd, std::string_view(&c, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto start = std::chrono::steady_clock::now();
  const HttpOutcome out = post(service.endpoint(), small_request(), 300 * kMillisecond);
  stop = true;
  EXPECT_EQ(out.kind, HttpOutcome::Kind::kTimedOut) << out.error;
  EXPECT_LT(seconds_since(start), 2.5);  // the whole answer takes 4 s
}

// Bodies are read up to kMaxAnswerBody, never buffered whole; chunked ones are decoded.
TEST(HttpPost, AnAnswersBodyIsCappedAndChunkedBodiesAreRead) {
  RawService huge([](int fd) {
    send_all(fd, "HTTP/1.1 200 OK\r\n\r\n");
    const std::string block(64 << 10, 'x');
    for (int i = 0; i < 80; ++i) send_all(fd, block);  // 5 MiB, no length
  });
  HttpOutcome out = post(huge.endpoint(), small_request(), 5 * kSecond);
  EXPECT_EQ(out.kind, HttpOutcome::Kind::kBroken);
  EXPECT_NE(out.error.find("over the 1048576 bytes"), std::string::npos) << out.error;
  EXPECT_TRUE(out.body.empty());
  RawService declared([](int fd) { send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 157286400\r\n\r\n"); });
  out = post(declared.endpoint(), small_request(), 5 * kSecond);
  EXPECT_EQ(out.kind, HttpOutcome::Kind::kBroken);
  RawService chunked([](int fd) {
    send_all(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\nsuccess\r\n3\r\n!!!\r\n0\r\n\r\n");
  });
  out = post(chunked.endpoint(), small_request(), 5 * kSecond);
  EXPECT_EQ(out.kind, HttpOutcome::Kind::kAnswered) << out.error;
  EXPECT_EQ(out.http_status, 200);
  EXPECT_EQ(out.body, "success!!!");
}

// A service that answers the first copy of a notify at once and credits the
// later copies only after the gateway gave up on them (late.py of the probe
// that found it): the run must count those credits, not leave them to land
// in the next run's database.
class LateService {
 public:
  LateService(std::string db, std::chrono::milliseconds late) : db_(std::move(db)), late_(late) {
    server_.Post("/notify", [this](const httplib::Request&, httplib::Response& res) {
      if (++requests_ > 1) std::this_thread::sleep_for(late_);
      sqlite3* c = nullptr;
      sqlite3_open(db_.c_str(), &c);
      sqlite3_busy_timeout(c, 5000);
      sqlite3_exec(c,
                   "BEGIN; INSERT INTO ledger (order_no, user_id, amount) VALUES ('O-1', 'alice', 12000);"
                   "UPDATE accounts SET balance = balance + 12000 WHERE user_id = 'alice';"
                   "UPDATE orders SET status = 'PAID' WHERE order_no = 'O-1'; COMMIT;",
                   nullptr, nullptr, nullptr);
      sqlite3_close(c);
      res.status = 200;
    });
    server_.new_task_queue = [] { return new httplib::ThreadPool(8); };
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LateService() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  std::string db_;
  std::chrono::milliseconds late_;
  std::atomic<int> requests_{0};
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST(BlackboxRun, WritesOfRequestsTheGatewayGaveUpOnAreJudgedInTheirOwnRun) {
  RunFixture f("late-writes");
  f.scenario.duplicate = 1.0;
  f.scenario.max_copies = 2;
  f.scenario.duplicate_delay_min = f.scenario.duplicate_delay_max = 0;
  LateService service((f.dir / "shop.sqlite").string(), std::chrono::milliseconds(1500));
  BlackboxOptions o = f.options(service.port());
  o.min_timeout = 300 * kMillisecond;  // the late copies time out long before they credit
  StatusOr<BlackboxRun> r = run_blackbox(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->requests, 3);
  EXPECT_EQ(r->timed_out, 2);
  EXPECT_EQ(r->ended_late, 2);
  EXPECT_EQ(r->still_running, 0);
  ASSERT_FALSE(r->verdict.violations.empty());
  EXPECT_EQ(r->verdict.violations[0].invariant, "double_credit");
  EXPECT_NE(r->verdict.violations[0].detail.find("3 times"), std::string::npos) << r->verdict.violations[0].detail;
}

TEST(BlackboxRun, ARequestStillRunningAfterTheDrainBoundIsCounted) {
  RunFixture f("still-running");
  f.scenario.duplicate = 1.0;
  f.scenario.max_copies = 1;
  f.scenario.duplicate_delay_min = f.scenario.duplicate_delay_max = 0;
  LateService service((f.dir / "shop.sqlite").string(), std::chrono::milliseconds(2500));
  BlackboxOptions o = f.options(service.port());
  o.min_timeout = 200 * kMillisecond;
  o.drain_timeout = 300 * kMillisecond;
  StatusOr<BlackboxRun> r = run_blackbox(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->timed_out, 1);
  EXPECT_EQ(r->still_running, 1);
}

class FixedLedger final : public LedgerView {
 public:
  std::optional<PaymentState> by_order(std::string_view order_no) const override {
    for (const auto& p : payments)
      if (p.order_no == order_no) return p;
    return std::nullopt;
  }
  std::optional<PaymentState> by_transaction(std::string_view id) const override {
    for (const auto& p : payments)
      if (p.transaction_id == id) return p;
    return std::nullopt;
  }
  std::vector<PaymentState> payments = {
      {"O-1", "4200000001", 12000, "CNY", PaymentState::Stage::kPaid},
      {"O-2", "4200000002", 990, "CNY", PaymentState::Stage::kWaiting},
  };
};

bool rsa_verifies(const fs::path& public_pem, const std::string& message, const std::string& signature_b64) {
  FILE* f = std::fopen(public_pem.c_str(), "rb");
  Pkey key(PEM_read_PUBKEY(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  std::string sig(signature_b64.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(sig.data()),
                                reinterpret_cast<const unsigned char*>(signature_b64.data()), static_cast<int>(signature_b64.size()));
  sig.resize(static_cast<std::size_t>(n) - std::count(signature_b64.begin(), signature_b64.end(), '='));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get());
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                          reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
}

TEST(QueryServer, AnswersEachGatewaysQueryFromTheLedger) {
  const fs::path dir = folder("run-keys");  // shared: each new folder costs RSA key generations
  WireKeys keys;
  ASSERT_TRUE(load_or_create_keys(dir.string(), keys).ok());
  std::unique_ptr<QueryServer> server;
  ASSERT_TRUE(QueryServer::start(0, keys, server).ok());
  httplib::Client c("127.0.0.1", server->port());

  // Between runs nothing is known.
  EXPECT_EQ(c.Get("/v3/pay/transactions/out-trade-no/O-1")->status, 404);
  FixedLedger ledger;
  server->attach(&ledger);

  const auto wechat = c.Get("/v3/pay/transactions/out-trade-no/O-1?mchid=1900000001");
  ASSERT_TRUE(wechat);
  EXPECT_EQ(wechat->status, 200);
  const auto w = nlohmann::json::parse(wechat->body);
  EXPECT_EQ(w["trade_state"], "SUCCESS");
  EXPECT_EQ(w["transaction_id"], "4200000001");
  EXPECT_EQ(w["amount"]["total"], 12000);
  const std::string signed_message = wechat->get_header_value("Wechatpay-Timestamp") + "\n" +
                                     wechat->get_header_value("Wechatpay-Nonce") + "\n" + wechat->body + "\n";
  EXPECT_TRUE(rsa_verifies(dir / "wechatpay_platform_public.pem", signed_message,
                           wechat->get_header_value("Wechatpay-Signature")));
  EXPECT_EQ(nlohmann::json::parse(c.Get("/v3/pay/transactions/out-trade-no/O-2")->body)["trade_state"], "NOTPAY");
  EXPECT_EQ(c.Get("/v3/pay/transactions/out-trade-no/O-404")->status, 404);

  const auto alipay = c.Get(R"(/gateway.do?method=alipay.trade.query&biz_content=%7B%22out_trade_no%22%3A%22O-1%22%7D)");
  ASSERT_TRUE(alipay);
  const std::string& text = alipay->body;
  const auto a = nlohmann::json::parse(text);
  EXPECT_EQ(a["alipay_trade_query_response"]["trade_status"], "TRADE_SUCCESS");
  EXPECT_EQ(a["alipay_trade_query_response"]["total_amount"], "120.00");
  // The signed text is the response object exactly as sent, between its key and ",\"sign\"".
  const std::size_t from = text.find(':') + 1, to = text.rfind(",\"sign\"");
  EXPECT_TRUE(rsa_verifies(dir / "alipay_public_key.pem", text.substr(from, to - from), a["sign"]));
  httplib::Params form = {{"method", "alipay.trade.query"}, {"biz_content", R"({"out_trade_no":"O-2"})"}};
  EXPECT_EQ(nlohmann::json::parse(c.Post("/gateway.do", form)->body)["alipay_trade_query_response"]["trade_status"],
            "WAIT_BUYER_PAY");

  const auto stripe = c.Get("/v1/payment_intents/4200000001");
  ASSERT_TRUE(stripe);
  EXPECT_EQ(nlohmann::json::parse(stripe->body)["status"], "succeeded");
  EXPECT_EQ(c.Get("/v1/payment_intents/4999999999")->status, 404);
  EXPECT_EQ(server->queries(), 8);
  server->attach(nullptr);
}

TEST(WireFormat, Crc32IsZlibs) {
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(crc32(""), 0u);
}

TEST(QueryServer, ServesPaypalsCertificateAndVerifiesItsWebhooks) {
  const fs::path dir = folder("run-keys");
  WireKeys keys;
  ASSERT_TRUE(load_or_create_keys(dir.string(), keys).ok());
  std::unique_ptr<QueryServer> server;
  ASSERT_TRUE(QueryServer::start(0, keys, server).ok());
  keys.paypal_cert_url = fmt::format("http://127.0.0.1:{}/v1/notifications/certs/CERT-twice", server->port());
  Notify n = paid_notify("paypal", "PAYMENT.CAPTURE.COMPLETED");
  StatusOr<WireRequest> genuine = encode(n, "paypal", keys, 1767225600, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", false);
  StatusOr<WireRequest> forged = encode(n, "paypal", keys, 1767225600, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", true);
  ASSERT_TRUE(genuine.ok() && forged.ok());
  EXPECT_EQ(genuine->header("PAYPAL-CERT-URL"), keys.paypal_cert_url);
  EXPECT_EQ(genuine->header("paypal-auth-algo"), "SHA256withRSA");
  EXPECT_EQ(genuine->header("PAYPAL-TRANSMISSION-TIME"), "2026-01-01T00:00:00Z");
  const auto event = nlohmann::json::parse(genuine->body);
  EXPECT_EQ(event["resource"]["amount"]["value"], "120.00");
  EXPECT_EQ(event["resource"]["custom_id"], "O-1");
  EXPECT_EQ(forged->body, genuine->body);

  httplib::Client c("127.0.0.1", server->port());
  const auto cert = c.Get("/v1/notifications/certs/CERT-twice");
  ASSERT_TRUE(cert);
  EXPECT_TRUE(cert->body.starts_with("-----BEGIN CERTIFICATE-----")) << cert->body;
  // The certificate's key checks the genuine signature over id|time|webhook id|crc32(body).
  BIO* bio = BIO_new_mem_buf(cert->body.data(), static_cast<int>(cert->body.size()));
  std::unique_ptr<X509, decltype(&X509_free)> x509(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr), &X509_free);
  BIO_free(bio);
  ASSERT_TRUE(x509);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> public_key(X509_get_pubkey(x509.get()), &EVP_PKEY_free);
  const std::string signed_text =
      genuine->header("PAYPAL-TRANSMISSION-ID") + "|2026-01-01T00:00:00Z|" + keys.paypal_webhook_id + "|" +
      std::to_string(crc32(genuine->body));
  EXPECT_TRUE(rsa_sha256_verify(public_key.get(), signed_text, genuine->header("PAYPAL-TRANSMISSION-SIG")));
  EXPECT_FALSE(rsa_sha256_verify(public_key.get(), signed_text, forged->header("PAYPAL-TRANSMISSION-SIG")));

  const auto ask = [&](const WireRequest& w, const std::string& webhook_id) {
    const nlohmann::json q = {{"auth_algo", w.header("PAYPAL-AUTH-ALGO")}, {"cert_url", w.header("PAYPAL-CERT-URL")},
                              {"transmission_id", w.header("PAYPAL-TRANSMISSION-ID")},
                              {"transmission_sig", w.header("PAYPAL-TRANSMISSION-SIG")},
                              {"transmission_time", w.header("PAYPAL-TRANSMISSION-TIME")}, {"webhook_id", webhook_id},
                              {"webhook_event", nlohmann::json::parse(w.body)}};
    const auto r = c.Post("/v1/notifications/verify-webhook-signature", q.dump(), "application/json");
    return r ? nlohmann::json::parse(r->body).value("verification_status", "") : "no answer";
  };
  EXPECT_EQ(ask(*genuine, keys.paypal_webhook_id), "SUCCESS");
  EXPECT_EQ(ask(*forged, keys.paypal_webhook_id), "FAILURE");
  EXPECT_EQ(ask(*genuine, "ANOTHERWEBHOOK01"), "FAILURE");
  EXPECT_EQ(c.Post("/v1/notifications/verify-webhook-signature", "{", "application/json")->status, 400);
}

TEST(BlackboxRun, AServiceAsksTheQueryApiDuringTheRun) {
  RunFixture f("query-during-run");
  gateway::OrderSpec unpaid = f.scenario.orders[0];
  unpaid.order_no = "U-1";
  unpaid.paid = false;
  f.scenario.orders.push_back(unpaid);
  f.scenario.attacks.forged_signature = 2;  // the fake does not verify signatures: only the query saves it
  f.scenario.attacks.window = 0;
  std::unique_ptr<QueryServer> query;
  ASSERT_TRUE(QueryServer::start(0, f.keys, query).ok());
  FakeService service((f.dir / "shop.sqlite").string(), 0, false, query->port());
  BlackboxOptions o = f.options(service.port());
  o.query_server = query.get();
  StatusOr<BlackboxRun> r = run_blackbox(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->verdict.violations.empty()) << r->verdict.violations[0].detail;
  EXPECT_EQ(r->forged, 2);
  EXPECT_GE(query->queries(), 3);  // the payment (again, if an answer came too late) and the two forgeries
}

// The same runs on the service's PostgreSQL database (--db postgres://...):
// seeding through the oracle file, the service's credits, the judgement.
TEST(BlackboxRun, ReadsAPostgresDatabase) {
  std::unique_ptr<engine::PostgresServer> server;
  if (Status s = engine::PostgresServer::start(server); !s.ok()) GTEST_SKIP() << s.message();
  const std::string url = "postgresql://postgres@/postgres?host=" + server->folder();
  std::string oracle = kOracle;
  oracle.replace(oracle.find("id INTEGER PRIMARY KEY"), 22, "id BIGSERIAL PRIMARY KEY");
  for (const bool double_credits : {false, true}) {
    RunFixture f(double_credits ? "pg-double" : "pg-once", url, oracle);
    ASSERT_TRUE(f.db);
    f.scenario.ack_loss = 1.0;  // every answer lost: three attempts reach the service
    f.scenario.max_attempts = 3;
    FakeService service(url, 0, double_credits);
    StatusOr<BlackboxRun> r = run_blackbox(f.options(service.port()));
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(service.requests(), 3);
    if (double_credits) {
      ASSERT_FALSE(r->verdict.violations.empty());
      EXPECT_EQ(r->verdict.violations[0].invariant, "double_credit");
    } else {
      EXPECT_TRUE(r->verdict.violations.empty()) << r->verdict.violations[0].detail;
      ASSERT_EQ(r->verdict.accounts.size(), 1u);
      EXPECT_EQ(r->verdict.accounts[0].balance, 12000);
    }
  }
}

}  // namespace
}  // namespace twice::blackbox
