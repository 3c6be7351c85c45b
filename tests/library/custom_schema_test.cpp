// A handler in its own schema: payments keyed by pay_id, a wallet per member,
// one credit_events row per credit. The checker knows nothing of these tables
// but what the handler's Schema says (its oracle queries), and still catches a
// double credit in them; the correct variant passes. Everything goes through
// the public API (twice/handler.h, twice/gtest.h), as a user's test would.
#include <algorithm>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "twice/gtest.h"
#include "twice/handler.h"

namespace {

const twice::Schema& wallet_schema() {
  // Field by field: a designated initializer that leaves out the optional
  // oracle queries trips -Wmissing-field-initializers.
  static const twice::Schema schema = [] {
    twice::Schema s;
    s.setup_sql = R"sql(
CREATE TABLE payments (
  pay_id   TEXT PRIMARY KEY,      -- the merchant's order number
  member   TEXT NOT NULL,
  cents    INTEGER NOT NULL,
  currency TEXT NOT NULL,
  state    TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'settled')),
  gateway_ref TEXT
);
CREATE TABLE wallet (
  member TEXT PRIMARY KEY,
  cents  INTEGER NOT NULL
);
CREATE TABLE credit_events (
  seq    INTEGER PRIMARY KEY,
  pay_id TEXT NOT NULL,
  member TEXT NOT NULL,
  cents  INTEGER NOT NULL
);
)sql";
    s.insert_order_sql = "INSERT INTO payments(pay_id, member, cents, currency) VALUES (?1, ?2, ?3, ?4)";
    s.insert_account_sql = "INSERT INTO wallet(member, cents) VALUES (?1, 0)";
    s.credits_sql = "SELECT pay_id, COUNT(*) FROM credit_events GROUP BY pay_id ORDER BY pay_id";
    s.balances_sql =
        "SELECT w.member, w.cents, COALESCE((SELECT SUM(e.cents) FROM credit_events e WHERE e.member = w.member), 0) "
        "FROM wallet w ORDER BY w.member";
    return s;
  }();
  return schema;
}

struct Payment {
  bool found = false;
  std::string member;
  std::string state;
};

Payment load_payment(twice::Db& db, const twice::Notify& n) {
  const twice::Result r = db.exec("SELECT member, state FROM payments WHERE pay_id = ? AND cents = ? AND currency = ?",
                                  {n.out_trade_no, n.amount, n.currency});
  if (!r.ok() || r.empty()) return {};
  return {true, r.at(0, "member").as_text(), r.at(0, "state").as_text()};
}

twice::Status credit(twice::Db& db, const twice::Notify& n, const std::string& member) {
  twice::Result r =
      db.exec("INSERT INTO credit_events(pay_id, member, cents) VALUES (?, ?, ?)", {n.out_trade_no, member, n.amount});
  if (!r.ok()) return r.status;
  return db.exec("UPDATE wallet SET cents = cents + ? WHERE member = ?", {n.amount, member}).status;
}

// BUG: reads the state, then writes it, in separate autocommit statements; two
// copies of one notify can both read 'open'.
class WalletCheckThenAct final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    twice::Db& db = env.db();
    const Payment p = load_payment(db, n);
    if (!p.found) return twice::Reply::fail("unknown payment");
    if (p.state == "settled") return twice::Reply::success();
    if (!db.exec("UPDATE payments SET state = 'settled', gateway_ref = ? WHERE pay_id = ?",
                 {n.transaction_id, n.out_trade_no}).ok())
      return twice::Reply::fail();
    if (!credit(db, n, p.member).ok()) return twice::Reply::fail();
    return twice::Reply::success();
  }
  const twice::Schema& schema() const override { return wallet_schema(); }
};

// Correct: open -> settled as a compare-and-swap, and the credit, in one transaction.
class WalletCompareAndSwap final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify& n, twice::Env& env) override {
    twice::Db& db = env.db();
    auto tx = db.begin(twice::TxMode::kImmediate);
    if (!tx.ok()) return twice::Reply::fail();
    const Payment p = load_payment(db, n);
    if (!p.found) return twice::Reply::fail("unknown payment");
    const twice::Result swapped =
        db.exec("UPDATE payments SET state = 'settled', gateway_ref = ? WHERE pay_id = ? AND state = 'open'",
                {n.transaction_id, n.out_trade_no});
    if (!swapped.ok()) return twice::Reply::fail();
    if (swapped.changes == 0) return twice::Reply::success();  // settled before: a duplicate
    if (!credit(db, n, p.member).ok() || !tx.commit().ok()) return twice::Reply::fail();
    return twice::Reply::success();
  }
  const twice::Schema& schema() const override { return wallet_schema(); }
};

const twice::HandlerInfo kCheckThenAct{"wallet-check-then-act", "its own schema; races",
                                       [] { return std::make_unique<WalletCheckThenAct>(); }};
const twice::HandlerInfo kCompareAndSwap{"wallet-cas", "its own schema; correct",
                                         [] { return std::make_unique<WalletCompareAndSwap>(); }};

twice::testing::Options base_scenarios() {
  twice::testing::Options o;
  o.seeds = 100;
  o.bundled = false;
  o.scenarios = {"sequential-duplicates", "concurrent-duplicates", "concurrent-topups"};
  return o;
}

TEST(CustomSchema, DoubleCreditInTheHandlersOwnTablesIsCaught) {
  const twice::testing::Report r = twice::testing::check_exactly_once(kCheckThenAct, base_scenarios());
  ASSERT_FALSE(r.passed) << r.message;
  EXPECT_NE(std::find(r.violations.begin(), r.violations.end(), "concurrent-duplicates: double_credit"),
            r.violations.end())
      << r.message;
  // The counterexample speaks the handler's schema, and the balances come from its oracle query.
  EXPECT_NE(r.message.find("INSERT INTO credit_events"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("UPDATE wallet SET cents = cents +"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("should be 12000  <-- wrong"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("twice replay --handler wallet-check-then-act --scenario concurrent-duplicates --seed"),
            std::string::npos)
      << r.message;
}

TEST(CustomSchema, CompareAndSwapInOneTransactionPasses) {
  TWICE_EXPECT_EXACTLY_ONCE(kCompareAndSwap, base_scenarios());
}

// The bundled jobs speak the reference schema (orders, ...). On a handler
// with tables of its own every tick fails ("no such table: orders"); that
// once went unsaid, and close-race and adyen-head-of-line passed vacuously.
TEST(CustomSchema, AJobThatCannotWorkWithTheHandlersTablesFailsTheScenarioNotPassesIt) {
  twice::testing::Options o;
  o.seeds = 5;
  o.bundled = false;
  o.scenarios = {"close-race", "adyen-head-of-line"};
  const twice::testing::Report r = twice::testing::check_exactly_once(kCompareAndSwap, o);
  ASSERT_FALSE(r.passed) << r.message;
  for (const char* expected : {"close-race: job_failed", "adyen-head-of-line: job_failed"})
    EXPECT_NE(std::find(r.violations.begin(), r.violations.end(), expected), r.violations.end())
        << expected << "\n" << r.message;
  // Which job, which statement, and why.
  EXPECT_NE(r.message.find("the order-closer job failed on "), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("the reconciler job failed on "), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("`UPDATE orders SET status = 'CLOSED'"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("no such table: orders"), std::string::npos) << r.message;
}

// An oracle query with too few columns read as zeros and empty texts: a
// correct handler was shown to lose every payment. It is an oracle_error
// naming the query and the columns it must return.
TEST(CustomSchema, AnOracleQueryWithTooFewColumnsIsAnOracleErrorNotALostPayment) {
  struct ShortCredits final : twice::Handler {
    twice::Reply handle(const twice::Notify& n, twice::Env& env) override { return correct_.handle(n, env); }
    WalletCompareAndSwap correct_;
    const twice::Schema& schema() const override {
      static const twice::Schema s = [] {
        twice::Schema short_credits = wallet_schema();
        short_credits.credits_sql = "SELECT pay_id FROM credit_events";
        return short_credits;
      }();
      return s;
    }
  };
  const twice::HandlerInfo handler{"short-credits", "", [] { return std::make_unique<ShortCredits>(); }};
  twice::testing::Options o = base_scenarios();
  o.seeds = 3;
  const twice::testing::Report r = twice::testing::check_exactly_once(handler, o);
  ASSERT_FALSE(r.passed);
  for (const auto& v : r.violations) EXPECT_EQ(v.substr(v.find(": ") + 2), "oracle_error") << r.message;
  EXPECT_NE(r.message.find("could not read credits (Schema::credits_sql): a row of 1 column, where it must return "
                           "(order_no, credits) at least"),
            std::string::npos)
      << r.message;
}

TEST(CustomSchema, ASchemaTheDatabaseRejectsIsReportedNotThrown) {
  struct BadSchema final : twice::Handler {
    twice::Reply handle(const twice::Notify&, twice::Env&) override { return twice::Reply::success(); }
    const twice::Schema& schema() const override {
      static const twice::Schema s = [] {
        twice::Schema bad;
        bad.setup_sql = "CREATE TABLE payments (pay_id TEXT PRIMARY KEY);";
        bad.insert_order_sql = "INSERT INTO payments(pay_id, member) VALUES (?1, ?2)";  // no column member
        bad.insert_account_sql = "SELECT ?1";
        bad.credits_sql = "SELECT pay_id, 0 FROM payments";
        bad.balances_sql = "SELECT 'x', 0, 0";
        return bad;
      }();
      return s;
    }
  };
  const twice::HandlerInfo bad{"bad-schema", "", [] { return std::make_unique<BadSchema>(); }};
  const twice::testing::Report r = twice::testing::check_exactly_once(bad, base_scenarios());
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("bad-schema on sequential-duplicates: the run could not start"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("member"), std::string::npos) << r.message;
}

}  // namespace
