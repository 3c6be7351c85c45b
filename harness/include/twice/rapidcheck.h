// RapidCheck over twice/testing.h: runs as generated values, so that a
// property's runs come from RapidCheck's random source and RC_PARAMS works as
// RapidCheck users expect ("seed=42" replays a test run, "max_success=1000"
// tries more runs, the "reproduce" string it prints replays the failure).
//
//   RC_GTEST_PROP(MyHandler, CreditsExactlyOnce, ()) {
//     twice::testing::rc_assert_exactly_once("my-handler", *twice::testing::gen_run());
//   }
//
// RapidCheck does not shrink these values: a smaller seed is just another run.
// twice shrinks the failing run's own choice sequence instead, and the failure
// message shows that counterexample. Header-only; link `rapidcheck` (its
// GoogleTest glue <rapidcheck/gtest.h> is header-only too). Same threading
// promises as twice/testing.h.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <rapidcheck.h>

#include "twice/testing.h"

namespace twice::testing {

// How RapidCheck prints a Run in a counterexample.
inline void showValue(const Run& run, std::ostream& os) { os << run; }

// A scenario among those `options` selects, and a seed over the whole 64-bit
// range (at any RapidCheck size).
inline rc::Gen<Run> gen_run(const Options& options = {}) {
  return rc::gen::noShrink(rc::gen::apply(
      [](std::string scenario, std::uint64_t seed) { return Run{std::move(scenario), seed}; },
      rc::gen::elementOf(scenario_refs(options)),
      rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))));
}

// Inside a property: runs `run` and fails the property with the shrunk
// counterexample when it shows a violation.
inline void rc_assert_exactly_once(std::string_view handler, const Run& run, const Options& options = {}) {
  const Report report = check_run(handler, run, options);
  if (!report.passed) RC_FAIL(report.message);
}

}  // namespace twice::testing
