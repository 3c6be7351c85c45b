// Footprint: what one step of a task may touch, for the exhaustive search's
// partial-order reduction (sim/choice_guide.h). Two steps whose footprints
// are independent give the same state in either order, so the search runs
// only one of the two orders.
//
// Derived conservatively from the text of the operation a step runs (the
// scheduler's pending text: the statement with its parameters, "SET k v NX
// PX 30000", "now()"): anything not understood is dependent on everything.
// The rules are written for SQLite (the only engine the reduction is used
// on; see docs/architecture.md, "Exhaustive search"):
//   - SELECT ... FROM t [JOIN u]: reads t, u (a subquery, WITH or a
//     table-less SELECT: everything);
//   - INSERT/REPLACE/UPDATE/DELETE on t inside a transaction: writes t and
//     the database's one writer lock (SQLite serialises writers); outside one
//     (autocommit: it commits at once, and needs every reader gone): everything
//     in the database;
//   - key-level rows, where the SQL says so: a single-table SELECT, UPDATE
//     or DELETE whose WHERE is a plain conjunction with `col = literal`
//     terms touches only rows with those values (an UPDATE's assigned
//     columns excepted: its rows move); a one-row INSERT [OR IGNORE|ABORT|
//     FAIL|ROLLBACK] with a column list touches the row with those values.
//     Two accesses of one table are disjoint when some column has different
//     values in both, compared after trimming, lower-casing (NOCASE and
//     RTRIM collations) and reading numbers as numbers ('05' is 5). The
//     writer lock is never keyed: two writes still conflict;
//   - BEGIN [DEFERRED]: nothing (SQLite takes no lock until the first
//     statement); BEGIN IMMEDIATE/EXCLUSIVE: the writer lock;
//   - COMMIT, END, ROLLBACK: everything in the database;
//   - the clock, sleeps, lock-service calls (their TTLs compare with the clock,
//     which every step advances), gateway, network and service calls: everything.
// A task's first step (its code before the first Env call) touches nothing
// shared; its last step, when someone waits for its end (a reply goes back to
// the gateway), is dependent on everything.
//
// Plain values; no threads.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace twice::sim {

struct Footprint {
  // Everything: dependent on every other step (what we do not understand).
  bool everything = false;
  // Every resource of the database ("*"), but nothing outside it.
  bool whole_database = false;
  std::vector<std::string> reads;   // table names, lower case
  std::vector<std::string> writes;  // table names, and "#writer" for the writer lock
  // Where the SQL says so, the rows of a table this step touches all have
  // these column values ({"orders": {{"order_no", "o-1"}}}, normalised);
  // a table touched and not in here: any of its rows.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> rows;

  static Footprint all() {
    Footprint f;
    f.everything = true;
    return f;
  }
  bool touches_nothing() const { return !everything && !whole_database && reads.empty() && writes.empty(); }
  // This step and `other` do the union of both.
  void merge(const Footprint& other);
};

// True when the two steps commute: neither writes what the other reads or
// writes (rows of one table with different keys are not the same thing).
bool independent(const Footprint& a, const Footprint& b);

// The footprint of running `operation` (a scheduler's pending text). `in_transaction`:
// the task's connection is inside BEGIN ... COMMIT.
Footprint footprint_of(std::string_view operation, bool in_transaction);

// How `operation` moves its task's transaction state: BEGIN opens, COMMIT,
// END and ROLLBACK (but not ROLLBACK TO) close; anything else keeps it.
bool in_transaction_after(std::string_view operation, bool in_transaction);

// The tables each table's triggers write ({"orders": {"twice_status_history"}}),
// read from a schema's CREATE TRIGGER statements: a write to the key writes
// those too. False when the schema has a trigger (or a foreign key) these
// rules cannot follow; the search then does without reduction.
using TriggerWrites = std::map<std::string, std::vector<std::string>>;
bool trigger_writes(std::string_view schema, TriggerWrites& out);
// `f` with the tables the triggers of its written tables write added.
void add_trigger_writes(const TriggerWrites& triggers, Footprint& f);

// "footprint: reads orders; writes ledger, #writer" (for tests and debugging).
std::string describe(const Footprint& f);

// A key value as a Footprint spells it, as SQLite may compare it: trimmed and
// lower case (NOCASE, RTRIM), a number as "#<number>" ('05' = 5 under numeric
// affinity). `value` is unquoted (an order number as the scenario gives it).
std::string key_spelling(const std::string& value);

}  // namespace twice::sim
