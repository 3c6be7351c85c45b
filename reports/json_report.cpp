#include "json_report.h"

#include <cstdio>

#include <fmt/format.h>

#include "cell_verdict.h"
#include "report_dir.h"
#include "twice_tool_version.h"
#include "statistics.h"

namespace twice::reports {
namespace {

// Added in schema version 1 without breaking it: readers that do not know
// these fields ignore them (docs/report-schema.md).
nlohmann::json statistics_json(const results::CellResult& c) {
  const CellStatistics s = cell_statistics(c);
  auto optional = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"failure_rate", s.failure_rate},
          {"wilson_95", {{"low", s.wilson95.low}, {"high", s.wilson95.high}}},
          {"first_failure", optional(s.first_failure)},
          {"median_schedules_to_failure", optional(s.median_schedules)},
          {"pct_depth", optional(s.pct_depth)},
          {"pct_lower_bound", optional(s.pct_lower_bound)}};
}

std::string verdict_key(const results::CellResult& c) {
  std::string name = verdict_name(verdict_of(&c));
  for (auto& ch : name)
    if (ch == ' ') ch = '_';
  return name;
}

}  // namespace

nlohmann::json to_json(const results::MatrixResult& m) {
  using nlohmann::json;
  json cells = json::array();
  for (const auto& c : m.cells) {
    json violations = json::array();
    for (const auto& v : c.violations) {
      const auto& cex = v.counterexample;
      json rows = json::array();
      for (const auto& r : cex.rows) {
        rows.push_back({{"column", r.column}, {"time", r.time}, {"kind", r.kind}, {"text", r.text},
                        {"result", r.result}, {"step", r.step}});
        // Only on a "cut" row of a long transcript: other rows stay as they were.
        if (r.skipped > 0) rows.back()["skipped"] = r.skipped;
      }
      json effects = json::array();
      for (const auto& e : cex.effects)
        effects.push_back({{"order_no", e.order_no}, {"service", e.service}, {"effect", e.effect},
                           {"applied", e.applied}, {"times", e.applied.size()}, {"required", e.required}});
      violations.push_back({
          {"name", v.invariant},
          {"subject", v.subject},
          {"detail", v.detail},
          {"seed", v.seed},
          {"failures", v.failures},
          {"schedules_to_first_failure", v.schedules_to_first},
          {"counterexample",
           {{"steps", cex.steps},
            {"hidden_steps", cex.hidden_steps},
            {"choices", cex.choices},
            {"columns", cex.columns},
            {"rows", rows},
            {"gateway", cex.gateway},
            {"balances", cex.balances},
            {"replay", cex.replay_command},
            {"replay_shrunk", cex.replay_shrunk_command}}},
      });
      // Effects per order, only where a run had services to call: other cells' JSON stays as it was.
      if (!effects.empty()) violations.back()["counterexample"]["effects"] = std::move(effects);
      if (cex.preemptions >= 0) violations.back()["counterexample"]["preemptions"] = cex.preemptions;
      if (cex.found_at_bound >= 0) violations.back()["counterexample"]["found_at_bound"] = cex.found_at_bound;
    }
    cells.push_back({
        {"handler", c.handler},
        {"scenario", c.scenario},
        {"strategy", c.strategy},
        {"seeds_run", c.seeds_run},
        {"failing_runs", c.failing_runs},
        {"violations", violations},
        {"expected", c.expected},
        {"expected_reason", c.expected_reason},
        {"expectation_listed", c.expectation_listed},
        {"matched", c.matched},
        {"verdict", verdict_key(c)},
        {"failing_run_indices", c.failing_run_indices},
        {"max_tasks", c.max_tasks},
        {"max_steps", c.max_steps},
        {"statistics", statistics_json(c)},
    });
    // Only on a cell a stop ended early: a finished run's report stays as it was.
    if (c.cut_short) cells.back()["cut_short"] = true;
    // Only with --coverage: the default report stays as it was.
    if (c.distinct_schedules >= 0) cells.back()["distinct_schedules"] = c.distinct_schedules;
    // Only under --strategy exhaustive: the default report stays as it was.
    if (const auto& e = c.exhaustive) {
      cells.back()["exhaustive"] = {{"schedules", e->schedules},
                                    {"runs", e->runs},
                                    {"reduction", e->reduction},
                                    {"preemption_bound", e->preemption_bound < 0 ? json(nullptr) : json(e->preemption_bound)},
                                    {"max_faults", e->max_faults},
                                    {"complete", e->complete},
                                    {"interrupted", e->interrupted},
                                    {"estimated_schedules", e->estimated_schedules},
                                    {"proved", e->complete && c.violations.empty() && c.failures.empty()}};
    }
    // Only on a cell the expected matrix requires proved ([proved] tables), under --strategy exhaustive.
    if (const auto& r = c.proof_required)
      cells.back()["proof_required"] = {
          {"preemption_bound", r->preemption_bound < 0 ? json(nullptr) : json(r->preemption_bound)},
          {"max_faults", r->max_faults},
          {"proved", !c.proof_missing()}};
    // Only on a cell whose handler left processes running, so that every other report stays as it was.
    if (c.processes_left > 0) cells.back()["processes_left"] = c.processes_left;
    // Only on a cell that failed, so that every other report stays as it was.
    if (!c.failures.empty()) {
      json failures = json::array();
      for (const auto& f : c.failures)
        failures.push_back({{"verdict", f.verdict},
                            {"detail", f.detail},
                            {"phase", f.phase},
                            {"run", f.run},
                            {"seed", f.seed},
                            {"replay", f.replay_command}});
      cells.back()["failures"] = failures;
    }
  }
  json out{{"schema_version", kJsonSchemaVersion},
           {"tool", "twice"},
           {"tool_version", TWICE_TOOL_VERSION},
           {"strategy", m.strategy},
           {"seeds", m.seeds},
           {"base_seed", m.base_seed},
           {"handlers", m.handlers},
           {"scenarios", m.scenarios},
           {"interrupted", m.interrupted},
           {"all_matched", m.all_matched()},
           {"expected_path", m.expected_path},
           {"cells", cells}};
  // Only when there was no expected matrix: a report against one stays as it was.
  if (!m.expected_found) out["expected_found"] = false;
  // Only when a server engine ran: a SQLite run's report stays as it was.
  if (!m.servers.empty()) {
    json servers = json::array();
    for (const auto& s : m.servers) servers.push_back(server_json(s));
    out["servers"] = std::move(servers);
  }
  return out;
}

nlohmann::json server_json(const results::EngineServer& server) {
  using nlohmann::json;
  json settings = json::array();
  for (const auto& [name, value] : server.settings) settings.push_back({{"name", name}, {"value", value}});
  return {{"engine", server.engine},
          {"version", server.version},
          {"url", server.url.empty() ? json(nullptr) : json(server.url)},
          {"settings", settings}};
}

Status write_json(const results::MatrixResult& m, const std::string& path) {
  // Invalid UTF-8 from a handler (a blob inlined into SQL) becomes U+FFFD
  // instead of an exception.
  return write_file_atomically(path, to_json(m).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace twice::reports
