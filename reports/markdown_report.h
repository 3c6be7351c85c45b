// Markdown report: GitHub-flavoured Markdown for a CI job summary
// ($GITHUB_STEP_SUMMARY) or a pull-request comment. The matrix as a table,
// per-cell statistics, and for each counterexample a Mermaid sequence diagram
// and a transcript table with one column per task, read top to bottom like a
// Hermitage test. Reads only the result model; every string from a run is
// escaped (reports/escape.h), so a payload can neither break the tables nor
// inject HTML. Pure functions, any thread.
#pragma once

#include <string>

#include "results/model.h"

namespace twice::reports {

std::string render_markdown_matrix(const results::MatrixResult& m);
std::string render_markdown_statistics(const results::MatrixResult& m);
// A ```mermaid block: participants Gateway, one per task column, DB (and the
// lock service when the handler used it).
std::string render_mermaid_sequence(const results::Counterexample& cex);
// The transcript: a step/time column, then one column per task.
std::string render_markdown_transcript(const results::Counterexample& cex);
// `compared`: what the cell was compared with, as Markdown
// (compared_with(m, markdown_code_span(m.expected_path))).
std::string render_markdown_counterexample(const results::CellResult& cell, const results::ViolationResult& v,
                                           const std::string& compared);
// The whole report.
std::string render_markdown(const results::MatrixResult& m);

}  // namespace twice::reports
