// JUnit XML report, for CI systems that show test results (GitHub check runs
// through a JUnit-report action, GitLab, Jenkins). One <testsuite> per handler
// and one <testcase> per cell: classname = handler, name = scenario. A cell
// that differs from the expected matrix is a <failure> carrying its
// violations, seed and replay command; a known-buggy handler caught as
// expected passes, its violation in <system-out>; a cell an interrupted run
// never reached is <skipped>. Each suite's properties name the strategy,
// seeds, base seed and the expected matrix the run read (expected_path).
// Reads only the result model; all text is escaped (attributes) or in CDATA
// sections split around "]]>", and invalid UTF-8 or control characters never
// reach the file. Pure, any thread.
#pragma once

#include <string>

#include "results/model.h"

namespace twice::reports {

std::string render_junit(const results::MatrixResult& m);

}  // namespace twice::reports
