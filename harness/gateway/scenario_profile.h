// The gateway a scenario plays: its profile (gateway/retry_profile.h) with the
// figures its [gateway] table sets in place of the profile's, and what
// `twice list` says of them. The simulator (run/simulate.cpp) and black-box
// mode (blackbox/blackbox_run.cpp) both play profile_of(); a scenario without
// [gateway] plays its profile exactly. Pure functions of the scenario.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gateway/retry_profile.h"
#include "gateway/scenario.h"
#include "twice/time.h"

namespace twice::gateway {

// The profile a run of `s` plays: s.profile's, its timeout and retry intervals
// replaced by those [gateway] sets. nullopt when s.profile names no profile
// (a file never loads so; a Scenario built in code may).
std::optional<RetryProfile> profile_of(const Scenario& s);
// The same for a run's set-up, which comes once a schedule: the shared
// all_profiles() entry itself when [gateway] sets nothing (no copy), else
// `own`, filled with profile_of(s). Null when s.profile names no profile.
const RetryProfile* played_profile(const Scenario& s, std::optional<RetryProfile>& own);

// One figure a run plays, as `twice list` reports it.
struct PlayedFigure {
  bool published = false;  // the gateway publishes its figure (else the profile's is the model's default)
  // The run plays another value than the profile's: [gateway] sets one, or
  // (retry intervals) [faults] max_attempts cuts them short.
  bool departs = false;
};
struct PlayedGateway {
  // As profile_of() gives it, its retry_after cut to the waits a notification
  // can meet: max_attempts - 1 when [faults] max_attempts cuts the schedule.
  RetryProfile profile;
  PlayedFigure timeout;
  PlayedFigure retry_intervals;
  int cut_by_max_attempts = 0;  // [faults] max_attempts where it cuts the schedule short, else 0
};
std::optional<PlayedGateway> played_gateway(const Scenario& s);

// What `twice list` prints under a scenario whose [gateway] departs from its
// profile, or whose max_attempts cuts its schedule, one line: "[gateway]
// timeout 3s instead of wechat-v3's published 5s", "[faults] max_attempts 3
// cuts alipay's published retry_intervals ... to 4m, 10m (2 waits, 14m in
// all)". Empty when it departs from nothing.
std::string gateway_departures(const Scenario& s);

// `d` exactly, in the scenario files' syntax ("15s", "24h4m", "1s250ms",
// "30d1s"): parse_duration() reads it back to `d`, which format_duration()'s
// rounded "1.3s" would not.
std::string exact_duration(Micros d);

}  // namespace twice::gateway
