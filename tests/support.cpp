#include "support.h"

#include <stdexcept>

#include "sim/trace.h"

namespace twice::testing {

gateway::Scenario bundled_scenario(const std::string& name) {
  StatusOr<gateway::Scenario> s = gateway::load_scenario(std::string(TWICE_SOURCE_DIR) + "/scenarios/" + name + ".toml");
  if (!s.ok()) throw std::runtime_error(s.status().message());
  return std::move(s).value();
}

gateway::Scenario one_order_scenario() {
  gateway::Scenario s;
  s.name = "test";
  s.description = "built in code";
  s.orders.push_back({"O-1", "alice", 100, "CNY", 0});
  s.latency_min = s.latency_max = 10 * kMillisecond;
  return s;
}

gateway::Scenario concurrent_copies_scenario(int copies, double p) {
  gateway::Scenario s = one_order_scenario();
  s.duplicate = p;
  s.max_copies = copies;
  s.duplicate_delay_min = s.duplicate_delay_max = 0;
  return s;
}

gateway::Scenario two_topups_scenario() {
  gateway::Scenario s = one_order_scenario();
  s.orders.push_back({"O-2", "alice", 50, "CNY", 0});
  return s;
}

const HandlerInfo& handler(const std::string& name) {
  const HandlerInfo* h = HandlerRegistry::instance().find(name);
  if (!h) throw std::invalid_argument("no handler " + name);
  return *h;
}

run::RunResult run_seed(const gateway::Scenario& s, const std::string& handler_name, std::uint64_t seed) {
  return run::simulate(run::RunSpec{&s, &handler(handler_name), {}, seed, std::nullopt}).value();
}

run::RunResult run_script(const gateway::Scenario& s, const std::string& handler_name, std::vector<int> script) {
  sim::StrategySpec strategy;
  strategy.kind = sim::StrategyKind::kScripted;
  strategy.script = std::move(script);
  return run::simulate(run::RunSpec{&s, &handler(handler_name), strategy, 0, std::nullopt}).value();
}

run::RunResult run_steps(const gateway::Scenario& s, const HandlerInfo& handler, std::vector<sim::ScriptStep> steps) {
  sim::StrategySpec strategy;
  strategy.kind = sim::StrategyKind::kScripted;
  strategy.steps = std::move(steps);
  return run::simulate(run::RunSpec{&s, &handler, strategy, 0, std::nullopt}).value();
}

run::RunResult run_steps(const gateway::Scenario& s, const std::string& handler_name,
                         std::vector<sim::ScriptStep> steps) {
  return run_steps(s, handler(handler_name), std::move(steps));
}

std::vector<std::string> invariants_of(const run::RunResult& r) {
  std::vector<std::string> out;
  for (const auto& v : r.verdict.violations) out.push_back(v.invariant);
  return out;
}

std::vector<std::string> steps_of(const run::RunResult& r, int task) {
  std::vector<std::string> out;
  for (const auto& e : r.trace.events()) {
    if (e.task != task) continue;
    std::string line = std::string(sim::kind_name(e.kind)) + " " + e.text;
    if (!e.result.empty()) line += " -> " + e.result;
    out.push_back(line);
  }
  return out;
}

}  // namespace twice::testing
