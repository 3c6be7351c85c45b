// CachedConnection::query_each (the checker's oracle queries at quiescence,
// inside one read transaction) answers each query as query() alone does,
// a failing one included, and leaves the connection as it found it; an
// answer it takes from an earlier query_committed() (the ack-time check) is
// the one a fresh connection reads, whatever other connections committed or
// rolled back in between, and after the file is rewritten as between runs.
// read_each() hands on the same rows without building Results (each value
// read in place as Value::as_text()/as_int() read it), and find_committed()
// visits query_committed()'s rows for one key: through a statement keyed on
// that key when the query can be wrapped, else over the whole answer; under
// a COMMIT that holds PENDING, from the file.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "env/cached_connection.h"
#include "env/sqlite_db.h"

namespace twice::env {
namespace {

std::string text_of(const Result& r) {
  std::string out = r.status.to_string() + "|";
  for (const auto& c : r.columns) out += c + ",";
  for (const auto& row : r.rows) {
    out += "\n";
    for (const auto& v : row) out += v.to_sql() + ",";
  }
  return out;
}

// Each row of each query as read_each() hands it on, as text() and integer()
// read every column, and each query's status.
std::vector<std::string> streamed(RawConnection& db, const std::vector<std::string>& sqls) {
  std::vector<std::string> out(sqls.size());
  const std::vector<Status> status = db.read_each(sqls, [&](std::size_t i, const RowView& row) {
    out[i] += "\n";
    for (std::size_t c = 0; c < row.size(); ++c) out[i] += std::string(row.text(c)) + "/" + std::to_string(row.integer(c)) + ",";
  });
  EXPECT_EQ(status.size(), sqls.size());
  for (std::size_t i = 0; i < sqls.size() && i < status.size(); ++i)
    out[i] = status[i].to_string() + "|" + (status[i].ok() ? out[i] : "");
  return out;
}

// The same from a Result, as the checker read it before.
std::string materialised(const Result& r) {
  std::string out = r.status.to_string() + "|";
  for (const auto& row : r.rows) {
    out += "\n";
    for (const auto& v : row) out += v.as_text() + "/" + std::to_string(v.as_int()) + ",";
  }
  return out;
}

// How many times the statement prepared on `conn` for `sql` has run.
int runs_of(sqlite3* conn, const std::string& sql) {
  for (sqlite3_stmt* s = sqlite3_next_stmt(conn, nullptr); s; s = sqlite3_next_stmt(conn, s))
    if (sql == sqlite3_sql(s)) return sqlite3_stmt_status(s, SQLITE_STMTSTATUS_RUN, 0);
  return 0;
}

class CheckerReads : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fresh_database_path();
    db_ = std::make_unique<CachedConnection>(path_);
    ASSERT_TRUE(db_->exec_script("CREATE TABLE ledger (order_no TEXT, amount INTEGER);"
                                 "INSERT INTO ledger VALUES ('O-1', 100), ('O-1', 100), ('O-2', -5);"
                                 "CREATE TABLE orders (order_no TEXT PRIMARY KEY, status TEXT);"
                                 "INSERT INTO orders VALUES ('O-1', 'PAID'), ('O-2', 'WAIT_PAY');")
                    .ok());
  }
  void TearDown() override {
    for (sqlite3* c : others_) sqlite3_close(c);
    db_.reset();
    remove_database(path_);
  }
  const std::vector<std::string> queries_ = {
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount > 0 GROUP BY order_no ORDER BY order_no",
      "SELECT order_no FROM no_such_table",  // a Schema's mistake: an error, and the others still answer
      "SELECT order_no, status FROM orders ORDER BY order_no",
      "SELECT order_no, COUNT(*) FROM ledger WHERE amount < 0 GROUP BY order_no ORDER BY order_no",
  };
  // A connection open until the test ends.
  sqlite3* open_and_keep() {
    others_.push_back(open_database(path_));
    return others_.back();
  }
  std::string path_;
  std::unique_ptr<CachedConnection> db_;
  std::vector<sqlite3*> others_;
};

TEST_F(CheckerReads, TogetherAnswerAsAlone) {
  std::vector<std::string> alone;
  for (const auto& sql : queries_) alone.push_back(text_of(db_->query(sql)));
  const std::vector<Result> together = db_->query_each(queries_);
  ASSERT_EQ(together.size(), queries_.size());
  for (std::size_t i = 0; i < queries_.size(); ++i) EXPECT_EQ(text_of(together[i]), alone[i]) << queries_[i];
  EXPECT_FALSE(together[1].ok());
  // The read transaction is over: the connection may serve the next run.
  EXPECT_TRUE(db_->reusable());
}

TEST_F(CheckerReads, AnOpenTransactionIsLeftOpen) {
  ASSERT_TRUE(db_->query("BEGIN").ok());
  ASSERT_TRUE(db_->query("INSERT INTO orders VALUES ('O-3', 'WAIT_PAY')").ok());
  const std::vector<Result> together = db_->query_each(queries_);
  EXPECT_EQ(together[2].rows.size(), 3u);  // sees its own transaction's row
  EXPECT_FALSE(db_->reusable());           // still in the caller's transaction
  ASSERT_TRUE(db_->query("ROLLBACK").ok());
  EXPECT_EQ(db_->query(queries_[2]).rows.size(), 2u);
}

// A writer commits, rolls back or does nothing at random; the checker asks
// query_committed() now and then (keeping its answer), and query_each() the
// rest of the time. Every answer must be what a fresh connection reads.
TEST_F(CheckerReads, KeptAnswersAreWhatAFreshConnectionReads) {
  sqlite3* writer = open_database(path_);
  const std::vector<std::string> reads = {queries_[0], queries_[2], queries_[3]};
  const std::vector<const char*> writes = {
      "INSERT INTO ledger VALUES ('O-1', 100)", "INSERT INTO ledger VALUES ('O-3', 7)",
      "DELETE FROM ledger WHERE rowid = (SELECT MAX(rowid) FROM ledger)", "UPDATE orders SET status = 'PAID'",
      "UPDATE orders SET status = status",  // changes no value, yet commits
  };
  std::mt19937 rng(20261201);
  int kept_then_asked = 0;
  bool kept = false;
  for (int step = 0; step < 600; ++step) {
    switch (rng() % 4) {
      case 0: exec_script(writer, writes[rng() % writes.size()]); break;  // autocommit
      case 1:
        exec_script(writer, "BEGIN");
        exec_script(writer, writes[rng() % writes.size()]);
        exec_script(writer, "ROLLBACK");
        break;
      case 2:
        ASSERT_TRUE(db_->query_committed(reads[rng() % reads.size()]).ok());
        kept = true;
        break;
      default: {
        // query_each() and read_each() in turns: both take kept answers.
        const bool whole = rng() % 2 == 0;
        const std::vector<Result> together = whole ? db_->query_each(reads) : std::vector<Result>{};
        const std::vector<std::string> rows = whole ? std::vector<std::string>{} : streamed(*db_, reads);
        sqlite3* fresh = open_database(path_);
        for (std::size_t i = 0; i < reads.size(); ++i) {
          const Result alone = query(fresh, reads[i]);
          if (whole)
            ASSERT_EQ(text_of(together[i]), text_of(alone)) << "step " << step << ": " << reads[i];
          else
            ASSERT_EQ(rows[i], materialised(alone)) << "step " << step << ": " << reads[i];
        }
        sqlite3_close(fresh);
        kept_then_asked += kept;
        kept = false;
      }
    }
  }
  EXPECT_GT(kept_then_asked, 50);
  sqlite3_close(writer);
}

// Between runs the file is rewritten in place with a new change counter
// (env/run_database.h); a kept answer from before must not survive it.
TEST_F(CheckerReads, AKeptAnswerDoesNotOutliveARewrite) {
  std::ifstream in(path_, std::ios::binary);
  std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string seeded = text_of(db_->query(queries_[0]));
  ASSERT_EQ(exec_script(open_and_keep(), "INSERT INTO ledger VALUES ('O-9', 1)"), "");
  const std::string kept = text_of(db_->query_committed(queries_[0]));
  ASSERT_NE(kept, seeded);
  // The seeded image written back with a change counter the file never had,
  // as RunDatabase::reset does between runs.
  ASSERT_GE(image.size(), 100u);
  for (std::size_t at : {std::size_t{24}, std::size_t{92}}) image[at] = static_cast<char>(0x40);
  const int fd = ::open(path_.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, image.data(), image.size(), 0), static_cast<ssize_t>(image.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(image.size())), 0);
  ::close(fd);
  EXPECT_EQ(text_of(db_->query_each(queries_)[0]), seeded);
}

TEST_F(CheckerReads, ReadEachHandsOnWhatQueryEachAnswers) {
  std::vector<std::string> whole;
  for (const Result& r : db_->query_each(queries_)) whole.push_back(materialised(r));
  const std::vector<std::string> rows = streamed(*db_, queries_);
  ASSERT_EQ(rows.size(), queries_.size());
  for (std::size_t i = 0; i < queries_.size(); ++i) EXPECT_EQ(rows[i], whole[i]) << queries_[i];
  EXPECT_NE(rows[1].find("no such table"), std::string::npos);
  EXPECT_TRUE(db_->reusable());
  // One query, and inside a transaction of the caller's: no transaction of
  // its own, the same rows.
  EXPECT_EQ(streamed(*db_, {queries_[0]})[0], whole[0]);
  ASSERT_TRUE(db_->query("BEGIN").ok());
  EXPECT_EQ(streamed(*db_, queries_), rows);
  EXPECT_FALSE(db_->reusable());
  ASSERT_TRUE(db_->query("ROLLBACK").ok());
}

// Every storage class, and the texts whose integer reading is lenient: a
// value read in place converts as the Value query() builds of it.
TEST_F(CheckerReads, RowsReadInPlaceConvertAsValuesDo) {
  ASSERT_TRUE(db_->exec_script("CREATE TABLE typed (v);"
                               "INSERT INTO typed VALUES (42), (-7), (9223372036854775807), (1.5), (12.0), (-0.25),"
                               " (1e300), (NULL), (''), ('O-1'), ('12abc'), (' 7'), ('-3'), ('+4'),"
                               " ('99999999999999999999'), (x'3132'), (x'00ff41'), (x'');")
                  .ok());
  const std::vector<std::string> sqls = {"SELECT v, typeof(v), v FROM typed ORDER BY rowid", "SELECT 1"};
  const std::vector<std::string> rows = streamed(*db_, sqls);
  EXPECT_EQ(rows[0], materialised(db_->query(sqls[0])));
  EXPECT_EQ(rows[1], materialised(db_->query(sqls[1])));
  EXPECT_NE(rows[0].find("1.5/1,"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("12abc/12,"), std::string::npos) << rows[0];
  // The kept answer of query_committed() is handed on through Values: the
  // same again.
  ASSERT_TRUE(db_->query_committed(sqls[0]).ok());
  EXPECT_EQ(streamed(*db_, sqls)[0], rows[0]);
}

// How many times a statement prepared on `conn` whose text starts with
// `prefix` has run, all of them together.
int runs_of_prefix(sqlite3* conn, const std::string& prefix) {
  int runs = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(conn, nullptr); s; s = sqlite3_next_stmt(conn, s))
    if (std::string(sqlite3_sql(s)).starts_with(prefix)) runs += sqlite3_stmt_status(s, SQLITE_STMTSTATUS_RUN, 0);
  return runs;
}
const std::string kKeyed = "WITH twice_committed(";

// Ledger rows for 20 more orders: past what find_committed() reads whole.
void grow(CachedConnection& db) {
  std::string rows;
  for (int i = 0; i < 20; ++i) rows += fmt::format("{}('B-{}', 1)", i ? ", " : "", i);
  ASSERT_TRUE(db.exec_script("INSERT INTO ledger VALUES " + rows + ";").ok());
}

// find_committed() visits exactly the rows of query_committed() whose first
// column reads as the key, in order, and stops at the first the visitor
// takes: read whole while the answer is small, by key once it is large. A
// key's rows may hold an integer or a null that reads as the key.
TEST_F(CheckerReads, FindCommittedVisitsTheKeysRowsOnly) {
  ASSERT_TRUE(db_->exec_script("INSERT INTO ledger VALUES ('O-3', 0), (3, 1), ('3', 2), (NULL, 3), ('', 4);").ok());
  const std::string sql = "SELECT order_no, amount FROM ledger ORDER BY rowid";
  for (const bool large : {false, true}) {
    if (large) grow(*db_);
    const Result all = db_->query(sql);
    ASSERT_TRUE(db_->find_committed(sql, "O-1", [](const RowView&) { return true; }));  // the size is known now
    const int keyed_before = runs_of_prefix(db_->handle(), kKeyed);
    for (const std::string key : {"O-1", "O-2", "O-3", "3", "", "O-9", "B-7"}) {
      std::vector<std::string> seen;
      EXPECT_FALSE(db_->find_committed(sql, key, [&](const RowView& row) {
        seen.push_back(std::string(row.text(0)) + "=" + std::to_string(row.integer(1)));
        return false;
      }));
      std::vector<std::string> expected;
      for (const Row& row : all.rows)
        if (row[0].as_text() == key) expected.push_back(row[0].as_text() + "=" + std::to_string(row[1].as_int()));
      EXPECT_EQ(seen, expected) << "key '" << key << "', large " << large;
      EXPECT_FALSE(expected.empty() && key != "O-9" && (large || key != "B-7")) << key;
    }
    EXPECT_EQ(runs_of_prefix(db_->handle(), kKeyed) - keyed_before, large ? 7 : 0) << "read by key when large";
    // The default (RawConnection's, over query_committed()) agrees.
    for (const std::string key : {"3", ""}) {
      std::vector<std::string> by_default, by_key;
      const auto into = [](std::vector<std::string>& out) {
        return [&out](const RowView& row) {
          out.push_back(std::string(row.text(0)) + "=" + std::to_string(row.integer(1)));
          return false;
        };
      };
      db_->find_committed(sql, key, into(by_key));
      db_->RawConnection::find_committed(sql, key, into(by_default));
      EXPECT_EQ(by_default, by_key) << "key '" << key << "'";
    }
    int visited = 0;
    EXPECT_TRUE(db_->find_committed(sql, "O-1", [&](const RowView&) { return ++visited == 1; }));
    EXPECT_EQ(visited, 1);
  }
  EXPECT_FALSE(db_->find_committed("SELECT order_no FROM no_such_table", "O-1", [](const RowView&) { return true; }));
}

// One value of the first column, of any storage class.
struct Cell {
  int type;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL
  std::int64_t integer;
  double real;
  std::string text;
};

// Whatever a first column holds and however it is declared (its affinity
// converts what is stored), the keyed read visits exactly the rows whose
// first column reads as the key, in the whole answer's order: the rows of
// an integer, a real, a blob or a null that read as the key included.
RC_GTEST_FIXTURE_PROP(CheckerReads, AKeyedReadVisitsTheWholeAnswersRowsForAnyKey, ()) {
  const std::string declared = *rc::gen::element<std::string>("", "TEXT", "NUMERIC", "INTEGER", "REAL", "BLOB");
  const auto text = rc::gen::container<std::string>(rc::gen::element('3', '0', '.', '-', 'e', 'O', 'o', ' '));
  const auto cells = *rc::gen::container<std::vector<Cell>>(rc::gen::build<Cell>(
      rc::gen::set(&Cell::type, rc::gen::element(SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB, SQLITE_NULL)),
      rc::gen::set(&Cell::integer, rc::gen::inRange<std::int64_t>(-3, 40)),
      rc::gen::set(&Cell::real, rc::gen::element(0.0, -0.0, 3.0, 2.5, 1e20, 0.1, -7.25)),
      rc::gen::set(&Cell::text, text)));
  sqlite3* conn = db_->handle();
  RC_ASSERT(exec_script(conn, "DROP TABLE IF EXISTS mixed; CREATE TABLE mixed (k " + declared + ", n INTEGER);") == "");
  sqlite3_stmt* insert = nullptr;
  RC_ASSERT(sqlite3_prepare_v2(conn, "INSERT INTO mixed VALUES (?1, ?2)", -1, &insert, nullptr) == SQLITE_OK);
  const auto add = [&](const Cell& c, int n) {
    switch (c.type) {
      case SQLITE_INTEGER: sqlite3_bind_int64(insert, 1, c.integer); break;
      case SQLITE_FLOAT: sqlite3_bind_double(insert, 1, c.real); break;
      case SQLITE_TEXT: sqlite3_bind_text(insert, 1, c.text.data(), static_cast<int>(c.text.size()), SQLITE_TRANSIENT); break;
      case SQLITE_BLOB: sqlite3_bind_blob(insert, 1, c.text.data(), static_cast<int>(c.text.size()), SQLITE_TRANSIENT); break;
      default: sqlite3_bind_null(insert, 1);
    }
    sqlite3_bind_int(insert, 2, n);
    sqlite3_step(insert);
    sqlite3_reset(insert);
  };
  for (std::size_t i = 0; i < cells.size(); ++i) add(cells[i], static_cast<int>(i));
  for (int i = 0; i < 20; ++i) add(Cell{SQLITE_TEXT, 0, 0, fmt::format("B-{}", i)}, 1000 + i);  // past a whole read
  sqlite3_finalize(insert);

  const std::string sql = "SELECT k, n FROM mixed ORDER BY rowid";
  const Result all = db_->query(sql);
  RC_ASSERT(all.ok());
  RC_ASSERT(db_->find_committed(sql, "B-0", [](const RowView&) { return true; }));  // whole: its size is known now
  std::vector<std::string> keys = {"", "3", "3.0", "-0", "0", "1e+20", "2.5", "O-1", "B-3"};
  for (const Row& row : all.rows) keys.push_back(row[0].as_text());
  keys.push_back(*text);
  const int keyed_before = runs_of_prefix(conn, kKeyed);
  for (const std::string& key : keys) {
    std::vector<std::string> seen, expected;
    db_->find_committed(sql, key, [&](const RowView& row) {
      seen.push_back(std::string(row.text(0)) + "#" + std::to_string(row.integer(1)));
      return false;
    });
    for (const Row& row : all.rows)
      if (row[0].as_text() == key) expected.push_back(row[0].as_text() + "#" + std::to_string(row[1].as_int()));
    RC_ASSERT(seen == expected);
  }
  RC_ASSERT(runs_of_prefix(conn, kKeyed) - keyed_before == static_cast<int>(keys.size()));
}

// A small ack-time answer is read whole and serves the checker at
// quiescence when nothing committed after it: credits_sql runs once, not
// twice. After another connection's commit it runs again, and answers what
// is committed. query_committed() keeps its answer the same way.
TEST_F(CheckerReads, ASmallAckTimeAnswerIsTakenAgainAtQuiescence) {
  const std::string& credits = queries_[0];
  for (const bool by_find : {true, false}) {
    if (by_find)
      ASSERT_TRUE(db_->find_committed(credits, "O-1", [](const RowView& row) { return row.integer(1) > 0; }));
    else
      ASSERT_TRUE(db_->query_committed(credits).ok());
    const int before = runs_of(db_->handle(), credits);
    ASSERT_GT(before, 0);
    std::vector<std::string> rows = streamed(*db_, queries_);
    EXPECT_EQ(runs_of(db_->handle(), credits), before);
    EXPECT_EQ(rows[0], materialised(db_->query(credits)));
  }
  ASSERT_TRUE(db_->find_committed(credits, "O-1", [](const RowView& row) { return row.integer(1) > 0; }));
  ASSERT_EQ(exec_script(open_and_keep(), "INSERT INTO ledger VALUES ('O-4', 9)"), "");
  const int after_commit = runs_of(db_->handle(), credits);
  std::vector<std::string> rows = streamed(*db_, queries_);
  EXPECT_EQ(runs_of(db_->handle(), credits), after_commit + 1);
  EXPECT_NE(rows[0].find("O-4"), std::string::npos) << rows[0];
  EXPECT_EQ(runs_of_prefix(db_->handle(), kKeyed), 0);
}

// Once the answer is large, the ack-time check reads one order's rows:
// credits_sql itself does not run at an ack, a statement keyed on its first
// column does, and answers as the whole answer would.
TEST_F(CheckerReads, FindCommittedReadsALargeAnswersKeyThroughAKeyedStatement) {
  grow(*db_);
  const std::string& credits = queries_[0];
  const auto credited = [](const RowView& row) { return row.integer(1) > 0; };
  EXPECT_TRUE(db_->find_committed(credits, "B-3", credited)) << "read whole: its size was not known";
  const int whole = runs_of(db_->handle(), credits);
  EXPECT_TRUE(db_->find_committed(credits, "O-1", credited));
  EXPECT_FALSE(db_->find_committed(credits, "O-2", credited)) << "O-2's only row is a reversal";
  EXPECT_FALSE(db_->find_committed(credits, "O-9", credited));
  EXPECT_EQ(runs_of(db_->handle(), credits), whole) << "the whole query was read again";
  EXPECT_EQ(runs_of_prefix(db_->handle(), kKeyed), 3);
  // A trailing semicolon and a comment at the end are the query's own.
  const std::string per_order = "SELECT order_no, COUNT(*) FROM ledger GROUP BY order_no";
  int whole_reads = 0;
  for (const std::string& sql : {per_order + "; \n", per_order + " -- per order"}) {
    EXPECT_TRUE(db_->find_committed(sql, "B-1", credited)) << sql;
    EXPECT_TRUE(db_->find_committed(sql, "O-2", credited)) << sql;
    EXPECT_EQ(runs_of_prefix(db_->handle(), per_order), ++whole_reads) << "the first read only is whole: " << sql;
  }
  EXPECT_EQ(runs_of_prefix(db_->handle(), kKeyed), 5);
  // A commit of another connection is seen at the next ack.
  ASSERT_EQ(exec_script(open_and_keep(), "INSERT INTO ledger VALUES ('O-9', 9)"), "");
  EXPECT_TRUE(db_->find_committed(credits, "O-9", credited));
  EXPECT_TRUE(db_->reusable());
}

// A schema with an index on the order column gets the ack-time read from
// it: the keyed statement's plan searches the index and scans no table.
TEST_F(CheckerReads, AKeyedReadSearchesAnIndexOnTheKeyColumn) {
  grow(*db_);
  ASSERT_TRUE(db_->exec_script("CREATE INDEX ledger_order ON ledger(order_no);"
                               "CREATE TABLE rebates (order_no TEXT, amount INTEGER);")
                  .ok());
  // The reference credits_sql's shape: a second table's counts beside the ledger's.
  const std::string sql =
      "SELECT order_no, COUNT(*), 'ledger' FROM ledger WHERE amount > 0 GROUP BY order_no "
      "UNION ALL SELECT order_no, COUNT(*), 'rebates' FROM rebates GROUP BY order_no";
  const auto credited = [](const RowView& row) { return row.integer(1) > 0; };
  ASSERT_TRUE(db_->find_committed(sql, "B-2", credited));  // whole: its size is known now
  for (const auto& [key, found] : std::vector<std::pair<std::string, bool>>{
           {"O-1", true}, {"B-7", true}, {"O-2", false}, {"O-9", false}, {"3", false}, {"", false}})
    EXPECT_EQ(db_->find_committed(sql, key, credited), found) << key;
  int keyed = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db_->handle(), nullptr); s; s = sqlite3_next_stmt(db_->handle(), s)) {
    if (!std::string(sqlite3_sql(s)).starts_with(kKeyed)) continue;
    ++keyed;
    EXPECT_EQ(sqlite3_stmt_status(s, SQLITE_STMTSTATUS_RUN, 0), 6);
    std::string plan;
    for (const Row& row : db_->query(std::string("EXPLAIN QUERY PLAN ") + sqlite3_sql(s)).rows)
      plan += row.back().as_text() + "\n";
    EXPECT_NE(plan.find("SEARCH ledger USING"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("SCAN ledger"), std::string::npos) << plan;
  }
  EXPECT_EQ(keyed, 1);
}

// Text a CTE cannot hold (here two statements: prepare() takes the first)
// is read whole, as query_committed() reads it, with the same answer.
TEST_F(CheckerReads, FindCommittedReadsWholeWhatCannotBeKeyed) {
  grow(*db_);
  const std::string two = "SELECT order_no, amount FROM ledger; SELECT 1";
  for (int round = 0; round < 2; ++round) {
    int seen = 0;
    EXPECT_FALSE(db_->find_committed(two, "O-1", [&](const RowView& row) {
      EXPECT_EQ(row.integer(1), 100);
      ++seen;
      return false;
    }));
    EXPECT_EQ(seen, 2);
  }
  EXPECT_EQ(runs_of_prefix(db_->handle(), "SELECT order_no, amount FROM ledger"), 2) << "read whole both times";
  EXPECT_EQ(runs_of_prefix(db_->handle(), kKeyed), 0);
}

// While a COMMIT waits for a reader, it holds PENDING and no new read may
// start: the keyed read is then made on the file itself, which holds what is
// committed, and not what the waiting COMMIT would publish.
TEST_F(CheckerReads, FindCommittedUnderAPendingCommitReadsWhatIsCommitted) {
  grow(*db_);
  const std::string& credits = queries_[0];
  const auto credited = [](const RowView& row) { return row.integer(1) > 0; };
  ASSERT_TRUE(db_->find_committed(credits, "B-1", credited));  // whole: now it is known to be large
  const int whole = runs_of(db_->handle(), credits);
  sqlite3* writer = open_and_keep();
  sqlite3* reader = open_and_keep();
  ASSERT_EQ(exec_script(writer, "BEGIN; INSERT INTO ledger VALUES ('O-5', 7);"), "");
  ASSERT_EQ(exec_script(reader, "BEGIN; SELECT COUNT(*) FROM ledger;"), "");
  EXPECT_NE(exec_script(writer, "COMMIT"), "") << "the reader holds SHARED: the COMMIT must wait";
  EXPECT_TRUE(db_->find_committed(credits, "O-1", credited));
  EXPECT_FALSE(db_->find_committed(credits, "O-5", credited)) << "not committed yet";
  EXPECT_EQ(runs_of(db_->handle(), credits), whole) << "read whole, not by key";
  ASSERT_EQ(exec_script(reader, "COMMIT"), "");
  ASSERT_EQ(exec_script(writer, "COMMIT"), "");
  EXPECT_TRUE(db_->find_committed(credits, "O-5", credited));
}

}  // namespace
}  // namespace twice::env
