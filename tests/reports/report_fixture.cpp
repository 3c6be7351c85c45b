#include "report_fixture.h"

namespace twice::reports::testing {
namespace {

using results::CellResult;
using results::Counterexample;
using results::MatrixResult;
using results::TranscriptRow;
using results::ViolationResult;

Counterexample double_credit_transcript(const std::string& sql_payload) {
  Counterexample cex;
  cex.seed = 5787478153334856;
  cex.choices = {200000, 0, 20001, 0, 0, 1};
  cex.columns = {"T1: notify O-2001 #1", "T2: notify O-2001 #1 (network copy)"};
  auto row = [&](int column, const char* time, const char* kind, std::string text, std::string result, bool step) {
    cex.rows.push_back(TranscriptRow{column, time, kind, std::move(text), std::move(result), step, 0});
    cex.steps += step;
  };
  row(0, "0.020s", "task", "starts notify O-2001 #1", "", false);
  row(0, "0.040s", "sql", "SELECT user_id, amount, currency, status FROM orders WHERE order_no = 'O-2001'",
      "1 row (user_id='carol', amount=12000, currency='CNY', status='WAIT_PAY')", true);
  row(1, "0.060s", "task", "starts notify O-2001 #1 (network copy)", "", false);
  row(1, "0.070s", "lock", "SET lock:order:O-2001 T2 NX PX 30000", "OK", true);
  row(1, "0.080s", "sql", "SELECT user_id, amount, currency, status FROM orders WHERE order_no = 'O-2001'",
      "1 row (user_id='carol', amount=12000, currency='CNY', status='WAIT_PAY')", true);
  row(1, "0.100s", "sql", "UPDATE orders SET status = 'PAID', transaction_id = '4200000001' WHERE order_no = 'O-2001'",
      "1 row changed", true);
  row(1, "0.120s", "sql", "INSERT INTO ledger(order_no, user_id, amount, memo) VALUES ('O-2001', 'carol', 12000, '" +
      sql_payload + "')", "1 row changed " + sql_payload, true);
  row(1, "0.130s", "clock", "sleeps 10ms", "", true);
  row(1, "0.135s", "note", "handler says: " + sql_payload, "", false);
  row(1, "0.140s", "task", "replies HTTP 200 {\"code\":\"SUCCESS\"}", "", false);
  row(0, "0.160s", "sql", "UPDATE orders SET status = 'PAID', transaction_id = '4200000001' WHERE order_no = 'O-2001'",
      "1 row changed", true);
  row(0, "0.180s", "sql", "INSERT INTO ledger(order_no, user_id, amount) VALUES ('O-2001', 'carol', 12000)",
      "1 row changed", true);
  row(0, "0.200s", "sql", "UPDATE accounts SET balance = balance + 12000 WHERE user_id = 'carol'", "1 row changed",
      true);
  row(0, "0.200s", "task", "replies HTTP 200 {\"code\":\"SUCCESS\"}", "", false);
  cex.gateway = {
      "[      0.000s] gw   event carol pays 12000 CNY for order O-2001",
      "[      0.000s] gw   event sends notify O-2001 attempt 1 as T1",
      "[      0.000s] gw   fault network duplicates notify O-2001 attempt 1: T2 arrives after 20.001ms",
      "[      0.200s] gw   event notify O-2001 attempt 1 acked (HTTP 200)",
  };
  cex.balances = {"carol: balance 24000, ledger credits 24000, should be 12000  <-- wrong"};
  cex.replay_command = "twice replay --handler check-then-act --scenario concurrent-duplicates --seed 5787478153334856";
  cex.replay_shrunk_command = cex.replay_command + " --shrunk";
  cex.shrunk = true;
  cex.subject = "O-2001";
  cex.detail = "order O-2001 was credited 2 times for one payment of 12000";
  return cex;
}

CellResult cell(const std::string& handler, const std::string& scenario, const std::string& strategy) {
  CellResult c;
  c.handler = handler;
  c.scenario = scenario;
  c.strategy = strategy;
  c.seeds_run = 200;
  c.max_tasks = 2;
  c.max_steps = 16;
  c.expectation_listed = true;
  return c;
}

void fail_at(CellResult& c, std::initializer_list<int> indices) {
  c.failing_run_indices = indices;
  c.failing_runs = static_cast<int>(c.failing_run_indices.size());
}

}  // namespace

const std::string kPayload = std::string("<script>alert(1)</script> ]]> a|b ``x`` `y` line1\nline2 #; %%{init}%% ") +
                             "\"q\" 'q' &amp; &#60; *em* _u_ [l](javascript:alert(1)) @here $x$ \x01 \xff \\| end";

const std::string kExpectedPath = "/tmp/a<b>&\"c\"`d/expected.toml";

MatrixResult hostile_matrix() {
  MatrixResult m;
  m.expected_path = kExpectedPath;
  const std::string evil_handler = "1. evil<script>alert(2)</script>|`h`";
  const std::string evil_scenario = "pay]]>load|`s`\nx";
  m.handlers = {"check-then-act", evil_handler};
  m.scenarios = {"concurrent-duplicates", evil_scenario, "sequential-duplicates"};
  m.strategy = "random";
  m.seeds = 200;
  m.base_seed = 1;
  m.interrupted = true;
  // What a server says of itself and the URL a user gave reach every header.
  m.servers = {{"mariadb", kPayload, kPayload, {{"innodb_snapshot_isolation", kPayload}}}};

  // A known bug caught, as expected: the payload is in its SQL.
  CellResult caught = cell("check-then-act", "concurrent-duplicates", "random");
  fail_at(caught, {5, 8, 20, 21, 60});
  caught.expected = {"double_credit"};
  caught.expected_reason = "both deliveries read WAIT_PAY before either writes <PAID> | " + kPayload;
  caught.matched = true;
  ViolationResult v;
  v.invariant = "double_credit";
  v.subject = "O-2001";
  v.detail = "order O-2001 was credited 2 times for one payment of 12000";
  v.failures = 5;
  v.schedules_to_first = 5;
  v.seed = 5787478153334856;
  v.counterexample = double_credit_transcript(kPayload);
  // A scenario names its own effects: untrusted text in the effects list too.
  v.counterexample.effects.push_back(
      results::EffectRecord{"O-2001", "warehouse", "ship" + kPayload, {"T1 at 0.100s key " + kPayload, "T2 at 0.200s"}, true});
  caught.violations.push_back(v);
  m.cells.push_back(caught);

  // A pass.
  CellResult pass = cell("check-then-act", evil_scenario, "random");
  pass.matched = true;
  m.cells.push_back(pass);

  // A canary no longer caught.
  CellResult lost = cell("check-then-act", "sequential-duplicates", "random");
  lost.expected = {"double_credit"};
  lost.expected_reason = "a retry after the ack was lost";
  m.cells.push_back(lost);

  // A regression, under PCT: payload in names, detail and replay command.
  CellResult regression = cell(evil_handler, "concurrent-duplicates", "pct(d=3)");
  fail_at(regression, {1, 2, 150});
  ViolationResult r = v;
  r.invariant = "lost_update";
  r.subject = "alice" + kPayload;
  r.detail = "- balance went missing: " + kPayload;
  r.failures = 3;
  r.schedules_to_first = 1;
  r.counterexample.replay_command = "twice replay --handler '" + evil_handler + "' ]]> " + kPayload;
  r.counterexample.replay_shrunk_command = r.counterexample.replay_command + " --shrunk";
  r.counterexample.columns[1] = "T2: " + kPayload;
  regression.violations.push_back(r);
  m.cells.push_back(regression);

  // evil_handler × evil_scenario and × sequential-duplicates were never run.
  return m;
}

MatrixResult plain_matrix() {
  MatrixResult m;
  m.handlers = {"cas", "check-then-act"};
  m.scenarios = {"concurrent-duplicates", "sequential-duplicates"};
  m.strategy = "random";
  m.seeds = 200;
  m.base_seed = 1;
  for (const auto& h : m.handlers)
    for (const auto& s : m.scenarios) {
      CellResult c = cell(h, s, "random");
      c.matched = true;
      if (h == "check-then-act" && s == "concurrent-duplicates") {
        fail_at(c, {5, 9, 30});
        c.expected = {"double_credit"};
        c.expected_reason = "both deliveries read WAIT_PAY before either writes PAID";
        ViolationResult v;
        v.invariant = "double_credit";
        v.subject = "O-2001";
        v.detail = "order O-2001 was credited 2 times for one payment of 12000";
        v.failures = 3;
        v.schedules_to_first = 5;
        v.seed = 5787478153334856;
        v.counterexample = double_credit_transcript("memo");
        c.violations.push_back(v);
      }
      m.cells.push_back(c);
    }
  return m;
}

MatrixResult mismatch_matrix() {
  MatrixResult m = plain_matrix();
  for (auto& c : m.cells) {
    if (c.violations.empty()) continue;
    c.matched = false;
    c.violations.front().counterexample.replay_shrunk_command =
        "twice replay --handler check-then-act --scenario concurrent-duplicates --seed 111 --shrunk";
    ViolationResult extra = c.violations.front();
    extra.invariant = "payload_missing";
    extra.detail = "order O-2001 was credited but its callback payload was not stored";
    extra.failures = 2;
    extra.seed = 222;
    extra.counterexample.replay_shrunk_command =
        "twice replay --handler check-then-act --scenario concurrent-duplicates --seed 222 --shrunk --invariant "
        "payload_missing";
    c.violations.push_back(extra);
  }
  return m;
}

MatrixResult exhaustive_matrix() {
  MatrixResult m = plain_matrix();
  m.strategy = "exhaustive(preemptions<=2, faults<=1)";
  m.seeds = 100;  // the unread defaults, as the CLI leaves them
  m.base_seed = 1;
  for (auto& c : m.cells) {
    c.strategy = m.strategy;
    c.seeds_run = 40;
    results::ExhaustiveVerdict e;
    e.schedules = 40;
    e.runs = 52;
    e.reduction = "sleep-sets";
    e.complete = true;
    e.estimated_schedules = 40;
    if (c.handler == "cas" && c.scenario == "sequential-duplicates") {
      e.complete = false;
      e.estimated_schedules = 81000;
    }
    if (c.handler == "check-then-act" && c.scenario == "concurrent-duplicates") {
      fail_at(c, {17, 18, 39});
      auto& v = c.violations.front();
      v.seed = 0;
      v.schedules_to_first = 17;
      v.counterexample.preemptions = 1;
      v.counterexample.found_at_bound = 1;
      v.counterexample.replay_command =
          "twice replay --handler check-then-act --scenario concurrent-duplicates --strategy exhaustive --schedule 0.1.0x8";
      v.counterexample.replay_shrunk_command =
          "twice replay --handler check-then-act --scenario concurrent-duplicates --strategy exhaustive --schedule 1.0x9";
    }
    if (c.handler == "check-then-act" && c.scenario == "sequential-duplicates") {
      c.proof_required = results::ProofRequirement{2, 2};
      c.matched = false;  // searched at 1 fault, narrower than required
    }
    c.exhaustive = e;
  }
  return m;
}

}  // namespace twice::reports::testing
