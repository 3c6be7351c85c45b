#include "explore/transcript.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/footprint.h"

namespace twice::explore {

namespace {

bool order_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// True when `text` names `order` as a whole: O-1 in "'O-1'" or "O-1:ship",
// not in "O-10" or "XO-1".
bool names_order(std::string_view text, std::string_view order) {
  if (order.empty()) return false;
  for (std::size_t at = text.find(order); at != std::string_view::npos; at = text.find(order, at + 1)) {
    const std::size_t end = at + order.size();
    if ((at == 0 || !order_char(text[at - 1])) && (end == text.size() || !order_char(text[end]))) return true;
  }
  return false;
}

// The rows a write statement changed, from its result ("2 rows changed"); 0 otherwise.
long rows_changed(const std::string& result) {
  long n = 0;
  const auto [end, ec] = std::from_chars(result.data(), result.data() + result.size(), n);
  if (ec != std::errc()) return 0;
  const std::string_view rest(end, static_cast<std::size_t>(result.data() + result.size() - end));
  return rest == " row changed" || rest == " rows changed" ? n : 0;
}

// The tasks a statement's result names as holding the lock it waited for or
// was refused ("SQLITE_BUSY at once: this transaction holds a read lock and
// T2 the write lock", "waits for a lock T2 and T5 hold"); none for any other
// result.
std::vector<int> lock_holders_named(const std::string& result) {
  std::vector<int> out;
  if (!result.starts_with("SQLITE_BUSY") && !result.starts_with("waits for a lock")) return out;
  for (std::size_t at = result.find('T'); at != std::string::npos; at = result.find('T', at + 1)) {
    if (at > 0 && order_char(result[at - 1])) continue;
    int task = 0;
    const auto [end, ec] = std::from_chars(result.data() + at + 1, result.data() + result.size(), task);
    if (ec != std::errc() || (end != result.data() + result.size() && order_char(*end))) continue;
    out.push_back(task);
  }
  return out;
}

// Which statements of a background job (an order-closer, a reconciler, a
// relay) may have changed a shown order's row, though they do not name it:
// "UPDATE orders SET status = 'CLOSED' WHERE status = 'WAIT_PAY' AND
// created_at <= 20000 -> 2 rows changed". Read from the statements' own
// footprints (sim/footprint.h): the tables and key columns by which some
// statement of the run picked a shown order's row are that order's; a write
// to such a table that changed rows, with no key on those columns for
// another value, may have been the one that changed it.
class OrderRows {
 public:
  OrderRows(const sim::Trace& trace, const std::set<std::string>& orders) {
    for (const auto& o : orders) shown_.insert(sim::key_spelling(o));
    for (const auto& e : trace.events()) {
      if (e.kind != sim::TraceKind::kSql) continue;
      for (const auto& [table, keys] : sim::footprint_of(e.text, true).rows)
        for (const auto& [column, value] : keys)
          if (shown_.count(value)) key_columns_[table].insert(column);
    }
  }

  bool may_have_changed(const sim::TraceEvent& e) const {
    if (e.kind != sim::TraceKind::kSql || key_columns_.empty() || rows_changed(e.result) == 0) return false;
    const sim::Footprint f = sim::footprint_of(e.text, true);
    for (const auto& table : f.writes) {
      auto columns = key_columns_.find(table);
      if (columns == key_columns_.end()) continue;
      bool another_row = false;
      if (auto keys = f.rows.find(table); keys != f.rows.end())
        for (const auto& [column, value] : keys->second)
          another_row |= columns->second.count(column) > 0 && !shown_.count(value);
      if (!another_row) return true;
    }
    return false;
  }

 private:
  std::set<std::string> shown_;
  std::map<std::string, std::set<std::string>> key_columns_;
};

// A transcript stays a story however long the run: a task column with more
// than kFirstSteps + kLastSteps + kLeastCut steps keeps its first and last
// steps and one "cut" row for those between (a livelock's 32,000 `SELECT 1`
// made a 50 MB report). Past kMostRows rows (a "stuck" run shows every task)
// each column keeps fewer. The gateway lines are cut the same way. `twice
// replay` prints the whole run. docs/report-schema.md lists these numbers.
constexpr int kFirstSteps = 20;
constexpr int kLastSteps = 20;
constexpr int kLeastCut = 10;
constexpr int kMostRows = 2000;
constexpr std::size_t kFirstGatewayLines = 100;
constexpr std::size_t kLastGatewayLines = 100;

std::string statement_summary(const std::map<std::string, int>& seen) {
  std::vector<std::pair<int, std::string>> most;
  for (const auto& [text, n] : seen) most.emplace_back(-n, text);
  std::sort(most.begin(), most.end());
  std::string out;
  for (std::size_t i = 0; i < most.size() && i < 2; ++i) {
    std::string text = most[i].second;
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    out += fmt::format("{}{} ({} time{})", i ? ", " : "", text, -most[i].first, most[i].first == -1 ? "" : "s");
  }
  if (most.size() > 2) out += fmt::format(" and {} other{}", most.size() - 2, most.size() == 3 ? "" : "s");
  return out;
}

void cut_long_columns(const std::map<int, int>& column_of, Counterexample& out) {
  std::map<int, int> steps_in;  // column -> steps
  for (const auto& r : out.rows)
    if (r.step) ++steps_in[r.column];
  int keep_first = kFirstSteps, keep_last = kLastSteps;
  const int columns = static_cast<int>(std::max<std::size_t>(1, column_of.size()));
  if (columns * (kFirstSteps + kLastSteps) > kMostRows) keep_first = keep_last = std::max(2, kMostRows / columns / 2);
  std::map<int, std::string> label;  // column -> "T3"
  for (const auto& [task, column] : column_of) label[column] = sim::task_label(task);

  std::vector<TranscriptRow> kept;
  std::map<int, int> seen_steps;            // column -> steps passed so far
  std::map<int, std::size_t> cut_row;       // column -> index in `kept` of its cut row
  std::map<int, std::map<std::string, int>> cut_statements;
  for (auto& r : out.rows) {
    const int total = steps_in.count(r.column) ? steps_in[r.column] : 0;
    const bool long_column = total > keep_first + keep_last + kLeastCut;
    const int before = seen_steps[r.column];
    if (r.step) ++seen_steps[r.column];
    // Cut: after the first steps, up to (not including) the first of the last ones.
    if (long_column && before >= keep_first && before < total - keep_last) {
      if (!cut_row.count(r.column)) {
        cut_row[r.column] = kept.size();
        kept.push_back(TranscriptRow{r.column, r.time, "cut", "", "", false, 0});
      }
      if (r.step) {
        ++kept[cut_row[r.column]].skipped;
        ++cut_statements[r.column][r.text];
      }
      continue;
    }
    kept.push_back(std::move(r));
  }
  for (const auto& [column, index] : cut_row) {
    TranscriptRow& r = kept[index];
    r.text = fmt::format("... {} step{} of {} left out: {}; twice replay prints them all ...", r.skipped,
                         r.skipped == 1 ? "" : "s", label.count(column) ? label[column] : "this task",
                         statement_summary(cut_statements[column]));
  }
  out.rows = std::move(kept);

  if (out.gateway.size() > kFirstGatewayLines + kLastGatewayLines + static_cast<std::size_t>(kLeastCut)) {
    const std::size_t left_out = out.gateway.size() - kFirstGatewayLines - kLastGatewayLines;
    std::vector<std::string> lines(out.gateway.begin(), out.gateway.begin() + kFirstGatewayLines);
    lines.push_back(fmt::format("... {} gateway lines left out; twice replay prints them all ...", left_out));
    lines.insert(lines.end(), out.gateway.end() - kLastGatewayLines, out.gateway.end());
    out.gateway = std::move(lines);
  }
}

}  // namespace

void build_transcript(const run::RunResult& run, const gateway::Scenario& scenario,
                      const check::Violation& violation, Counterexample& out) {
  // The orders the violation is about: the subject itself, or an account's orders.
  std::set<std::string> orders;
  for (const auto& o : scenario.orders)
    if (o.order_no == violation.subject || o.user == violation.subject) orders.insert(o.order_no);
  // An order outside the scenario's list (an attacker's unknown order) is
  // still an order: its story is the tasks and effects that concern it.
  if (orders.empty() && !violation.subject.empty()) {
    bool an_order = false;
    for (const auto& [id, info] : run.tasks) an_order |= info.order_no == violation.subject;
    for (const auto& e : run.effects) an_order |= e.order_no == violation.subject;
    if (an_order) orders.insert(violation.subject);
  }
  const bool all_tasks = orders.empty();  // "stuck" and checker errors concern the whole run

  // An external service's line concerns the orders it names, and each
  // service gets a lane of its own, after the tasks.
  auto mentions_shown_order = [&](const std::string& text) {
    if (all_tasks) return true;
    for (const auto& o : orders)
      if (names_order(text, o)) return true;
    return false;
  };
  // A background job's task (a reconciler, an outbox relay, an order-closer)
  // serves no one order: it is shown when one of its steps or service calls
  // names a shown order, or one of its statements may have changed a shown
  // order's row without naming it, since that is then part of the story.
  const OrderRows order_rows(run.trace, orders);
  std::set<int> involved_jobs;
  std::vector<std::string> services;  // in the order they first act
  for (const auto& e : run.trace.events()) {
    if (e.task != 0 && e.kind != sim::TraceKind::kService) {
      auto task = run.tasks.find(e.task);
      if (task != run.tasks.end() && task->second.order_no.empty() &&
          (mentions_shown_order(e.text) || order_rows.may_have_changed(e)))
        involved_jobs.insert(e.task);
    }
    if (e.kind != sim::TraceKind::kService || !mentions_shown_order(e.text)) continue;
    involved_jobs.insert(e.task);
    const std::string name = e.text.substr(0, e.text.find(':'));
    if (std::find(services.begin(), services.end(), name) == services.end()) services.push_back(name);
  }

  std::set<int> shown;
  for (const auto& [id, info] : run.tasks)
    if (all_tasks || orders.count(info.order_no) || (info.order_no.empty() && involved_jobs.count(id))) shown.insert(id);
  // A task whose lock made a step of those tasks wait or fail with
  // SQLITE_BUSY is part of the story, whatever order it serves: the step's
  // result names it ("SQLITE_BUSY, waits for the lock T2 holds"), and without
  // it the wait or the BUSY has no cause. Only those the violation's own
  // tasks met: the holders' own waits would pull in every task of a busy run
  // (a flash sale's ten orders queueing for one lock) and bury the story.
  if (!all_tasks) {
    std::set<int> holders;
    for (const auto& e : run.trace.events())
      if (e.kind == sim::TraceKind::kSql && shown.count(e.task))
        for (const int holder : lock_holders_named(e.result))
          if (run.tasks.count(holder)) holders.insert(holder);
    shown.insert(holders.begin(), holders.end());
  }

  std::map<int, int> column_of;
  for (const auto& [id, info] : run.tasks) {
    if (!shown.count(id)) continue;
    column_of[id] = static_cast<int>(out.columns.size());
    out.columns.push_back(fmt::format("T{}: {}", id, info.name));
  }
  std::map<std::string, int> service_column;
  for (const auto& name : services) {
    service_column[name] = static_cast<int>(out.columns.size());
    out.columns.push_back(fmt::format("{} (service)", name));
  }

  auto names_any_order = [&](const std::string& text) {
    for (const auto& o : scenario.orders)
      if (names_order(text, o.order_no)) return true;
    for (const auto& [id, info] : run.tasks)
      if (names_order(text, info.order_no)) return true;
    return false;
  };
  bool last_task_shown = false;  // the last line of a task (not the gateway) was in a shown column
  // A shown task refused a lock, while hidden tasks ran: its next row would
  // follow a gap with no cause shown (a flash sale's queue of hidden writers
  // taking the lock in turn). A note before that row says how long it waited
  // and which hidden tasks took steps meanwhile.
  struct Wait {
    Micros since = 0;
    int steps = 0;
    std::vector<int> tasks;  // in the order they first stepped
  };
  std::map<int, Wait> waiting;
  const auto refused_a_lock = [](const sim::TraceEvent& e) {
    return e.kind == sim::TraceKind::kSql &&
           (e.result.starts_with("SQLITE_BUSY, waits for the lock") || e.result.starts_with("waits for a lock"));
  };
  out.rows.clear();
  out.gateway.clear();
  out.steps = 0;
  out.hidden_steps = 0;
  for (const auto& e : run.trace.events()) {
    const bool step = e.kind == sim::TraceKind::kSql || e.kind == sim::TraceKind::kLock ||
                      e.kind == sim::TraceKind::kClock || e.kind == sim::TraceKind::kCall;
    if (e.task == 0) {
      // Gateway lines that mention one of the orders shown, and a fault that
      // names no order right after a shown task's line: "the process is
      // down; it restarts in 2s" after the crash in that task's column.
      const bool relevant = mentions_shown_order(e.text) ||
                            (e.kind == sim::TraceKind::kFault && last_task_shown && !names_any_order(e.text));
      if (relevant) out.gateway.push_back(sim::format_event(e));
      continue;
    }
    last_task_shown = column_of.count(e.task) > 0;
    if (e.kind == sim::TraceKind::kService) {
      // What the service applied, in its own lane; the call itself is the caller's step.
      if (!mentions_shown_order(e.text)) continue;
      const std::size_t colon = e.text.find(':');
      const std::string name = e.text.substr(0, colon);
      const std::string what = colon == std::string::npos ? e.text : e.text.substr(colon + 2);
      out.rows.push_back(TranscriptRow{service_column.at(name), format_time(e.time), sim::kind_name(e.kind),
                                       fmt::format("{}: {}", sim::task_label(e.task), what), e.result, false, 0});
      continue;
    }
    auto it = column_of.find(e.task);
    if (it == column_of.end()) {
      if (step) {
        ++out.hidden_steps;
        for (auto& [id, w] : waiting) {
          ++w.steps;
          if (std::find(w.tasks.begin(), w.tasks.end(), e.task) == w.tasks.end()) w.tasks.push_back(e.task);
        }
      }
      continue;
    }
    if (auto w = waiting.find(e.task); w != waiting.end()) {
      if (w->second.steps > 0) {
        constexpr std::size_t kNamed = 8;
        std::string who;
        for (std::size_t i = 0; i < w->second.tasks.size() && i < kNamed; ++i)
          who += (i ? ", " : "") + sim::task_label(w->second.tasks[i]);
        if (w->second.tasks.size() > kNamed) who += fmt::format(" and {} more", w->second.tasks.size() - kNamed);
        out.rows.push_back(TranscriptRow{
            it->second, format_time(e.time), "note",
            fmt::format("(waited {} for the lock; meanwhile {} hidden step{} of {})", format_time(e.time - w->second.since),
                        w->second.steps, w->second.steps == 1 ? "" : "s", who),
            "", false, 0});
      }
      waiting.erase(w);
    }
    if (step) ++out.steps;
    out.rows.push_back(TranscriptRow{it->second, format_time(e.time), sim::kind_name(e.kind), e.text, e.result, step, 0});
    if (refused_a_lock(e)) waiting[e.task] = Wait{e.time, 0, {}};
  }
  cut_long_columns(column_of, out);

  out.effects.clear();
  for (const auto& e : run.effects) {
    if (!all_tasks && !orders.count(e.order_no)) continue;
    auto it = std::find_if(out.effects.begin(), out.effects.end(), [&](const EffectRecord& r) {
      return r.order_no == e.order_no && r.effect == e.effect;
    });
    if (it == out.effects.end()) {
      out.effects.push_back(EffectRecord{e.order_no, e.service, e.effect, {}, false});
      it = std::prev(out.effects.end());
    }
    it->applied.push_back(fmt::format("{} at {}{}", sim::task_label(e.task), format_time(e.at),
                                      e.key.empty() ? "" : " key " + e.key));
  }
  for (const auto& o : scenario.orders) {
    if (!o.paid || (!all_tasks && !orders.count(o.order_no))) continue;
    for (const auto& effect : scenario.required_effects) {
      auto it = std::find_if(out.effects.begin(), out.effects.end(), [&](const EffectRecord& r) {
        return r.order_no == o.order_no && r.effect == effect;
      });
      if (it != out.effects.end()) {
        it->required = true;
        continue;
      }
      std::string service;
      for (const auto& s : gateway::services_of(scenario))
        if (std::find(s.effects.begin(), s.effects.end(), effect) != s.effects.end()) service = s.name;
      out.effects.push_back(EffectRecord{o.order_no, service, effect, {}, true});
    }
  }

  out.balances.clear();
  for (const auto& a : run.verdict.accounts) {
    if (!all_tasks && a.user != violation.subject) {
      bool shown = false;
      for (const auto& o : scenario.orders) shown |= o.user == a.user && orders.count(o.order_no);
      if (!shown) continue;
    }
    std::string line = fmt::format("{}: balance {}, ledger credits {}, should be {}", a.user, a.balance,
                                   a.ledger_sum, a.should_be);
    if (a.balance != a.should_be || a.ledger_sum != a.should_be) line += "  <-- wrong";
    out.balances.push_back(std::move(line));
  }
}

}  // namespace twice::explore
