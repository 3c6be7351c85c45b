#include "cell_verdict.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace twice::reports {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

std::string compared_with(const results::MatrixResult& m, const std::string& shown_path) {
  if (m.expected_found) return shown_path;
  return "the default that every cell passes (there is no " + shown_path + ")";
}

std::string cut_short_clause(const results::MatrixResult& m) {
  const auto cut = std::count_if(m.cells.begin(), m.cells.end(), [](const results::CellResult& c) { return c.cut_short; });
  if (cut == 0) return "";
  return fmt::format(", {} of them cut short before all {} seeds", cut, cut == 1 ? "its" : "their");
}

std::vector<std::pair<std::string, std::string>> unseen_bug_caveats(const results::MatrixResult& m) {
  constexpr int kExpectedSeeds = 100;
  const auto bug_unseen = [](const results::CellResult& c) {
    if (c.matched || !c.failures.empty()) return false;
    const std::vector<std::string> observed = c.observed();
    return std::any_of(c.expected.begin(), c.expected.end(), [&](const std::string& e) {
      return std::find(observed.begin(), observed.end(), e) == observed.end();
    });
  };
  std::vector<std::pair<std::string, std::string>> out;
  if (!is_exhaustive(m) && m.seeds < kExpectedSeeds && std::any_of(m.cells.begin(), m.cells.end(), bug_unseen))
    out.emplace_back(fmt::format("the expected matrix holds at {} seeds per cell; at {} a known bug may not show yet",
                                 kExpectedSeeds, m.seeds),
                     fmt::format("run --seeds {} or more before taking \"no longer caught\" for a regression",
                                 kExpectedSeeds));
  if (is_exhaustive(m) && std::any_of(m.cells.begin(), m.cells.end(), [&](const results::CellResult& c) {
        return bug_unseen(c) && c.exhaustive && !c.exhaustive->complete && !c.exhaustive->interrupted;
      }))
    out.emplace_back("a search that ran out of its budget before every schedule may not have reached a known bug yet",
                     "raise --budget (0: no limit) before taking \"no longer caught\" for a regression");
  return out;
}

std::string intended_difference_hint(const results::MatrixResult& m, const std::string& shown_path) {
  if (m.expected_found)
    return "If a difference is intended, change " + shown_path + " to say so (docs/ci.md, \"When the run is red\").";
  return "If a difference is intended, write " + shown_path + " to say so (docs/scenarios.md, \"The expected matrix\").";
}

CellVerdict verdict_of(const results::CellResult* cell) {
  if (!cell) return CellVerdict::kNotRun;
  if (!cell->failures.empty()) return CellVerdict::kFailed;
  if (cell->matched) return cell->violations.empty() ? CellVerdict::kPass : CellVerdict::kCaught;
  if (cell->proof_missing() && cell->observed() == cell->expected) return CellVerdict::kNotProved;
  if (cell->expected.empty()) return CellVerdict::kRegression;
  if (cell->violations.empty()) return CellVerdict::kCanaryLost;
  return CellVerdict::kMismatch;
}

bool is_exhaustive(const results::MatrixResult& m) { return m.strategy.rfind("exhaustive", 0) == 0; }

const char* runs_noun(const results::CellResult& cell) { return cell.exhaustive ? "schedules" : "runs"; }

bool differs(CellVerdict v) {
  return v == CellVerdict::kRegression || v == CellVerdict::kCanaryLost || v == CellVerdict::kMismatch ||
         v == CellVerdict::kFailed || v == CellVerdict::kNotProved;
}

const char* verdict_name(CellVerdict v) {
  switch (v) {
    case CellVerdict::kPass: return "pass";
    case CellVerdict::kCaught: return "caught";
    case CellVerdict::kRegression: return "regression";
    case CellVerdict::kCanaryLost: return "canary lost";
    case CellVerdict::kMismatch: return "mismatch";
    case CellVerdict::kNotRun: return "not run";
    case CellVerdict::kFailed: return "failed";
    case CellVerdict::kNotProved: return "not proved";
  }
  return "?";
}

std::string observed_summary(const results::CellResult& cell) {
  if (cell.violations.empty() && !cell.failures.empty()) return cell.failures.front().verdict;
  if (cell.violations.empty()) return "pass";
  std::vector<std::string> parts;
  for (const auto& v : cell.violations) parts.push_back(fmt::format("{} {}/{}", v.invariant, v.failures, cell.seeds_run));
  return join(parts, ", ");
}

std::string expected_summary(const results::CellResult& cell) {
  return cell.expected.empty() ? "pass" : join(cell.expected, "+");
}

std::string difference_label(const results::CellResult& cell) {
  const CellVerdict v = verdict_of(&cell);
  if (v == CellVerdict::kRegression) return " (a regression)";
  if (v == CellVerdict::kCanaryLost) return " (a known bug is no longer caught)";
  if (v != CellVerdict::kMismatch) return {};
  const std::vector<std::string> observed = cell.observed();
  std::vector<std::string> unexpected, missing;
  for (const auto& o : observed)
    if (std::find(cell.expected.begin(), cell.expected.end(), o) == cell.expected.end()) unexpected.push_back(o);
  for (const auto& e : cell.expected)
    if (std::find(observed.begin(), observed.end(), e) == observed.end()) missing.push_back(e);
  std::vector<std::string> parts;
  if (!unexpected.empty()) parts.push_back("not expected: " + join(unexpected, ", "));
  if (!missing.empty()) parts.push_back("a known bug is no longer caught: " + join(missing, ", "));
  return parts.empty() ? std::string() : " (" + join(parts, "; ") + ")";
}

std::string mismatch_sentence(const results::CellResult& cell) {
  const CellVerdict v = verdict_of(&cell);
  if (!differs(v)) return {};
  const std::string why = difference_label(cell);
  if (v == CellVerdict::kFailed) {
    std::string out = fmt::format("expected {}, ", expected_summary(cell));
    if (!cell.violations.empty()) out += fmt::format("observed {}, ", observed_summary(cell));
    std::vector<std::string> parts;
    for (const auto& f : cell.failures)
      parts.push_back(fmt::format("{}: {}{}", f.verdict, f.detail,
                                  f.replay_command.empty() ? "" : "; replay: " + f.replay_command));
    return out + join(parts, "; ");
  }
  if (v == CellVerdict::kNotProved)
    return fmt::format("expected {}, required: {}; not proved: {}", expected_summary(cell),
                       proof_requirement_text(*cell.proof_required), proof_shortfall(cell));
  const std::string observed =
      cell.violations.empty() ? fmt::format("pass in {} {}", cell.seeds_run, runs_noun(cell)) : observed_summary(cell);
  return fmt::format("expected {}, observed {}{}", expected_summary(cell), observed, why);
}

std::string length_sentence(const results::Counterexample& cex) {
  const std::string hidden =
      cex.hidden_steps ? fmt::format(" ({} steps of unrelated tasks hidden)", cex.hidden_steps) : "";
  const std::string shrunk = cex.shrunk ? "Shrunk to" : "Not shrunk (a shrink budget of 0):";
  if (cex.rows.empty()) return fmt::format("{} 0 steps: no handler task ran for it{}", shrunk, hidden);
  return fmt::format("{} {} step{}{}", shrunk, cex.steps, cex.steps == 1 ? "" : "s", hidden);
}

const results::ViolationResult* headline_violation(const results::CellResult& cell) {
  auto unexpected = [&](const results::ViolationResult& v) {
    return std::find(cell.expected.begin(), cell.expected.end(), v.invariant) == cell.expected.end();
  };
  bool any_unexpected = false;
  for (const auto& v : cell.violations) any_unexpected |= unexpected(v);
  const results::ViolationResult* best = nullptr;
  for (const auto& v : cell.violations) {
    if (any_unexpected && !unexpected(v)) continue;
    if (!best || v.failures > best->failures ||
        (v.failures == best->failures && v.schedules_to_first < best->schedules_to_first))
      best = &v;
  }
  return best;
}

std::string processes_left_sentence(int processes, std::string_view ended) {
  if (processes <= 0) return {};
  return fmt::format("the handler left {} process{} running when the {} ended; twice killed {}", processes,
                     processes == 1 ? "" : "es", ended, processes == 1 ? "it" : "them");
}

std::string effect_line(const results::EffectRecord& e) {
  std::string line = fmt::format("{} {} ({}): ", e.order_no, e.effect, e.service);
  const std::size_t n = e.applied.size();
  if (n == 0) line += "never applied";
  else line += fmt::format("applied {}: ", n == 1 ? std::string("once") : fmt::format("{} times", n));
  for (std::size_t i = 0; i < n; ++i) line += (i ? ", " : "") + e.applied[i];
  if (e.required) line += n == 0 ? "; required" : "";
  if (n > 1 || (e.required && n == 0)) line += "  <-- wrong";
  return line;
}

namespace {
std::string rough(double n) { return n < 1e6 ? fmt::format("{:.0f}", n) : fmt::format("{:.1e}", n); }
}  // namespace

namespace {
// "up to 2 preemptions and 1 fault"
std::string bounds_text(int preemption_bound, int max_faults) {
  return fmt::format("up to {} and {} fault{}",
                     preemption_bound < 0 ? std::string("any number of preemptions")
                                          : fmt::format("{} preemption{}", preemption_bound, preemption_bound == 1 ? "" : "s"),
                     max_faults, max_faults == 1 ? "" : "s");
}
}  // namespace

std::string proof_requirement_text(const results::ProofRequirement& r) {
  return "proved " + bounds_text(r.preemption_bound, r.max_faults);
}

std::string proof_shortfall(const results::CellResult& cell) {
  if (!cell.proof_missing()) return {};
  if (!cell.exhaustive) return "no exhaustive search";
  const results::ExhaustiveVerdict& e = *cell.exhaustive;
  if (!cell.failures.empty()) return fmt::format("{} (the cell failed)", cell.failures.front().verdict);
  if (!cell.violations.empty()) return fmt::format("{} (a violation)", observed_summary(cell));
  if (e.interrupted)
    return fmt::format("interrupted after {} schedule{}", e.schedules, e.schedules == 1 ? "" : "s");
  if (!e.complete)
    return fmt::format("explored {} schedule{} of about {} (the budget ran out; raise --budget)", e.schedules,
                       e.schedules == 1 ? "" : "s", rough(std::max<double>(e.estimated_schedules, e.schedules)));
  const results::ProofRequirement& r = *cell.proof_required;
  return fmt::format("a search {}, narrower than required (run with --preemption-bound {} --max-faults {})",
                     bounds_text(e.preemption_bound, e.max_faults),
                     r.preemption_bound < 0 ? std::string("none") : std::to_string(r.preemption_bound), r.max_faults);
}

std::string exhaustive_sentence(const results::CellResult& cell) {
  if (!cell.exhaustive) return {};
  const results::ExhaustiveVerdict& e = *cell.exhaustive;
  const std::string bounds = bounds_text(e.preemption_bound, e.max_faults);
  const std::string reduced = e.reduction == "none"
                                  ? std::string("no reduction")
                                  : fmt::format("after {} reduction, of {} run{}", e.reduction, e.runs, e.runs == 1 ? "" : "s");
  const std::string schedules = fmt::format("{} schedule{}", e.schedules, e.schedules == 1 ? "" : "s");
  std::vector<std::string> seen;
  for (const auto& v : cell.violations) seen.push_back(fmt::format("{} in {}", v.invariant, v.failures));
  for (const auto& f : cell.failures) seen.push_back(f.verdict);
  if (e.interrupted)
    return fmt::format("interrupted after {} ({}) {}{}", schedules, reduced, bounds,
                       seen.empty() ? ": none failed so far, nothing proved" : ": " + fmt::format("{}", fmt::join(seen, ", ")));
  if (!e.complete)
    // A rough estimate (sibling subtrees taken as equal): its order of magnitude is what it says.
    return fmt::format("explored {} of about {} ({}) {}{}", schedules, rough(std::max<double>(e.estimated_schedules, e.schedules)),
                       reduced, bounds, seen.empty() ? ": none failed so far, nothing proved" : ": " + fmt::format("{}", fmt::join(seen, ", ")));
  // One schedule: no choice was drawn at all, not even the tempo (no
  // latency has a range), so no two tasks' steps could interleave; say so
  // rather than "all".
  if (seen.empty() && e.schedules == 1)
    return fmt::format("proved: its one schedule ({}) {} holds; no two tasks' steps could interleave", reduced, bounds);
  if (seen.empty()) return fmt::format("proved: all {} ({}) {} hold", schedules, reduced, bounds);
  return fmt::format("searched all {} ({}) {}: {}", schedules, reduced, bounds, fmt::join(seen, ", "));
}

std::string server_sentence(const results::EngineServer& server,
                            const std::function<std::string(std::string_view)>& quoted) {
  std::string out = server.engine + " server " + (server.version.empty() ? "of unknown version" : quoted(server.version));
  for (const auto& [name, value] : server.settings) out += ", " + quoted(name + "=" + value);
  return out + (server.url.empty() ? ", started by twice" : ", at " + quoted(server.url));
}

}  // namespace twice::reports
