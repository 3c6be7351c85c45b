// Which tasks a counterexample's transcript shows. A background job serves no
// one order, so its task carries none; it is still part of the story when it
// touched a shown order: the reconciler that credits an order a notify also
// credits is one of the two credits of a double credit.
#include <gtest/gtest.h>

#include <algorithm>

#include "explore/transcript.h"
#include "sim/trace.h"
#include "../support.h"

namespace twice {
namespace {

bool has_column_ending(const explore::Counterexample& cex, const std::string& suffix) {
  return std::any_of(cex.columns.begin(), cex.columns.end(),
                     [&](const std::string& c) { return c.ends_with(suffix); });
}

TEST(Transcript, AReconcilerThatCreditedTheOrderIsShownBesideTheNotify) {
  auto s = testing::bundled_scenario("close-race");
  s.reconciler = true;
  // The first seed (of a fixed range) whose double credit went through the
  // reconciler: it updated the order, though its task has no order of its own.
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    const auto r = testing::run_seed(s, "event-id-dedupe", seed);
    const check::Violation* v = nullptr;
    for (const auto& x : r.verdict.violations)
      if (x.invariant == "double_credit") v = &x;
    if (!v) continue;
    bool job_credited = false;
    for (const auto& e : r.trace.events()) {
      auto task = r.tasks.find(e.task);
      job_credited |= task != r.tasks.end() && task->second.name == "reconciler" &&
                      e.kind == sim::TraceKind::kSql && e.text.find(v->subject) != std::string::npos &&
                      e.text.starts_with("UPDATE");
    }
    if (!job_credited) continue;
    explore::Counterexample cex;
    explore::build_transcript(r, s, *v, cex);
    EXPECT_TRUE(has_column_ending(cex, ": reconciler")) << "seed " << seed;
    return;
  }
  FAIL() << "no seed in 1..400 double-credits through the reconciler; the scenario changed";
}

}  // namespace
}  // namespace twice
