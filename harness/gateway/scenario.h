// Scenario: what the gateway and the network do in a run, as read from a
// bundled or user-written TOML file (format: docs/scenarios.md). A Scenario is
// plain data; the Gateway plays it, drawing every fault from the run's Choices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "twice/time.h"

namespace twice::gateway {

struct OrderSpec {
  std::string order_no;
  std::string user;
  std::int64_t amount = 0;  // minor units
  std::string currency = "CNY";
  Micros paid_at = 0;       // when the user pays: the gateway's first notify follows
};

struct Scenario {
  std::string name;         // the file's stem: "concurrent-duplicates"
  std::string description;  // one line, for `twice list`
  std::string source;       // the file it came from, for messages
  std::string profile = "wechat-v3";
  std::vector<OrderSpec> orders;

  // Network: each scheduling point (a statement, a lock call) takes a latency in this range.
  Micros latency_min = 1 * kMillisecond;
  Micros latency_max = 20 * kMillisecond;
  // Faults, each drawn per delivery attempt from the run's Choices.
  double duplicate = 0.0;   // probability that the network sends an attempt again
  int max_copies = 1;       // at most this many extra copies per attempt
  Micros duplicate_delay_min = 0;
  Micros duplicate_delay_max = 1 * kSecond;
  double ack_loss = 0.0;    // probability that the handler's reply never reaches the gateway
  int max_attempts = 0;     // 0: the profile's whole schedule
};

// Thrown by nothing: loading reports errors as this value.
struct ScenarioError {
  std::string message;  // "scenarios/x.toml:12: ... ; allowed: ..."
};

// Reads and validates one scenario file. On error returns false and sets `error`.
bool load_scenario(const std::string& path, Scenario& out, ScenarioError& error);
// Reads every *.toml in `dir` except expected.toml, sorted by name.
bool load_scenario_dir(const std::string& dir, std::vector<Scenario>& out, ScenarioError& error);

}  // namespace twice::gateway
