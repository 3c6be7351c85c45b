// HTML report: one self-contained file to open in a browser or keep as a CI
// artifact. Inline CSS, JS and SVG only; a Content-Security-Policy forbids
// every network load and allows only the page's own style and script (by
// hash), so even a payload that escaped escaping could not run. Shows the
// matrix in colour, statistics with a chart of schedules to first failure,
// and for each counterexample a swimlane timeline (reports/html_svg.h) and
// its full transcript. Reads only the result model; pure, any thread.
#pragma once

#include <string>

#include "results/model.h"

namespace twice::reports {

std::string render_html(const results::MatrixResult& m);

}  // namespace twice::reports
