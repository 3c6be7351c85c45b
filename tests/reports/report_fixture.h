// Result models built by hand for the report tests: no simulator, so each
// test states exactly what the writers are given. The hostile one puts the
// worst text we can think of everywhere a run or a user can put text.
#pragma once

#include <string>

#include "results/model.h"

namespace twice::reports::testing {

// Script tags, CDATA terminators, Markdown table pipes, backtick fences,
// newlines, Mermaid separators, quotes, entity look-alikes, a control
// character and a byte that is not UTF-8.
extern const std::string kPayload;

// An expected-matrix path no report may print as is: markup, an ampersand,
// quotes and a backtick.
extern const std::string kExpectedPath;

// Two handlers × three scenarios, covering every verdict: pass, a known bug
// caught (with a counterexample whose SQL carries kPayload), a regression
// (kPayload in the detail and the replay command), a canary no longer caught,
// a PCT cell, and a cell missing because the run was interrupted. Handler and
// scenario names carry markup too, its expected_path is kExpectedPath, and
// it ran on a MariaDB server whose version, URL and setting are kPayload.
results::MatrixResult hostile_matrix();

// A realistic, well-behaved matrix: the check-then-act double credit as the
// real run reports it.
results::MatrixResult plain_matrix();
// plain_matrix() whose known bug (double_credit, 3 of 200 runs, expected)
// shows a second violation, payload_missing (2 of 200, seed 222), that the
// expected matrix does not list: a "mismatch" cell, read for the second.
results::MatrixResult mismatch_matrix();
// plain_matrix() as `twice run --strategy exhaustive` reports it: no seeds
// read (seeds and base_seed keep their unread defaults, a violation's seed
// is 0), and each cell's search: cas × concurrent-duplicates proved (40
// schedules), cas × sequential-duplicates cut short by its budget (nothing
// proved), check-then-act × concurrent-duplicates's double credit in 3 of 40
// schedules, first in schedule 17, with 1 preemption, and check-then-act ×
// sequential-duplicates required proved up to 2 preemptions and 2 faults,
// searched at 1 fault: "not proved".
results::MatrixResult exhaustive_matrix();

}  // namespace twice::reports::testing
