#include "cli/list_json.h"

#include "check/invariant.h"
#include "gateway/retry_profile.h"
#include "gateway/scenario_profile.h"
#include "twice/handler.h"
#include "twice/job.h"
#include "twice/version.h"
#include "twice_tool_version.h"

namespace twice::cli {

namespace {

// scenarios[].gateway: the figures its runs play, each with whether the gateway
// publishes its own and whether the scenario's [gateway] departs from it.
nlohmann::json gateway_json(const gateway::Scenario& s) {
  const std::optional<gateway::PlayedGateway> played = gateway::played_gateway(s);
  if (!played) return nullptr;  // only a Scenario built in code names no profile
  nlohmann::json waits = nlohmann::json::array();
  for (const Micros w : played->profile.retry_after) waits.push_back(gateway::exact_duration(w));
  return {{"timeout", gateway::exact_duration(played->profile.timeout)},
          {"timeout_published", played->timeout.published},
          {"timeout_departs", played->timeout.departs},
          {"retry_intervals", waits},
          {"retry_intervals_published", played->retry_intervals.published},
          {"retry_intervals_departs", played->retry_intervals.departs}};
}

const char* phase_name(check::Phase phase) {
  switch (phase) {
    case check::Phase::kDuringRun: return "during_run";
    case check::Phase::kAtQuiescence: return "at_quiescence";
    case check::Phase::kHarness: return "harness";
  }
  return "?";
}

}  // namespace

nlohmann::json list_as_json(const std::string& scenarios_dir, const std::vector<gateway::Scenario>& scenarios) {
  nlohmann::json out = {{"schema_version", 1}, {"tool", "twice"}, {"tool_version", TWICE_TOOL_VERSION},
                        {"api_version", TWICE_API_VERSION}, {"scenarios_dir", scenarios_dir}};
  auto& handlers = out["handlers"] = nlohmann::json::array();
  for (const auto* h : HandlerRegistry::instance().all()) {
    handlers.push_back({{"name", h->name}, {"description", h->description}, {"jobs", h->make()->jobs()}});
  }
  auto& listed = out["scenarios"] = nlohmann::json::array();
  for (const auto& s : scenarios) {
    nlohmann::json jobs = nlohmann::json::array();
    if (s.reconciler) jobs.push_back("reconciler");
    if (s.close_after > 0) jobs.push_back("order-closer");
    listed.push_back({{"name", s.name},
                      {"description", s.description},
                      {"digest", s.digest},
                      {"profile", s.profile},
                      {"gateway", gateway_json(s)},
                      {"jobs", jobs}});
  }
  auto& invariants = out["invariants"] = nlohmann::json::array();
  for (const auto& i : check::invariants())
    invariants.push_back({{"name", i.name}, {"phase", phase_name(i.phase)}, {"violated_when", i.violated_when}});
  auto& jobs = out["jobs"] = nlohmann::json::array();
  for (const auto* j : JobRegistry::instance().all()) jobs.push_back({{"name", j->name}, {"description", j->description}});
  auto& profiles = out["profiles"] = nlohmann::json::array();
  for (const auto& p : gateway::all_profiles()) {
    profiles.push_back({{"name", p.name},
                        {"description", p.description},
                        {"events",
                         {{"paid", p.paid_event_type},
                          {"second_paid", p.second_paid_event_type.empty() ? p.paid_event_type : p.second_paid_event_type},
                          {"refunded", p.refunded_event_type},
                          {"closed", p.closed_event_type.empty() ? nlohmann::json(nullptr)
                                                                 : nlohmann::json(p.closed_event_type)}}}});
  }
  return out;
}

}  // namespace twice::cli
