// The drawings of the HTML report, as inline SVG strings: no script, no
// external reference, every text escaped (reports/escape.h), so the page stays
// self-contained and a payload in a transcript stays text. Pure functions.
#pragma once

#include <string>

#include "results/model.h"

namespace twice::reports {

// A counterexample as swimlanes: one lane for the gateway and one per task
// column, time flowing down, one box per step with a short label and the full
// statement and result as its <title> tooltip.
std::string svg_swimlanes(const results::Counterexample& cex);

// Horizontal bars, one per cell that failed at least once: schedules to the
// first failure on a log scale, with a mark at the median gap between
// failures. Cells are labelled "handler × scenario (strategy)".
std::string svg_schedules_chart(const results::MatrixResult& m);

// A small 0–100% axis with the 95% Wilson interval as a bar, the observed
// rate as a dot and, for PCT cells, the theoretical bound as a tick.
std::string svg_rate_interval(const results::CellResult& cell);

}  // namespace twice::reports
