// Text report: the verdict, the matrix and the counterexamples that matter,
// for a terminal. Colour only when asked (the CLI decides from --color, NO_COLOR
// and whether stdout is a TTY). Every line of a run whose cells all match the
// expected matrix fits kTextWidth columns (handler names longer than 28 are
// cut), so that the first screen of a CI log reads. Reads only the result model.
#pragma once

#include <cstddef>
#include <string>

#include "results/model.h"

namespace twice::reports {

inline constexpr std::size_t kTextWidth = 100;

struct TextOptions {
  bool color = false;
  int column_width = 46;  // width of one task's column in a transcript
  // false: counterexamples only of the cells that differ from the expected
  // matrix (the known bugs it expects are not news); true: of every cell.
  bool show_all = false;
  // Where the full reports were written ("twice-report/"); empty: none.
  std::string reports_at;
};

// One symbol per cell, a line per handler, the scenarios numbered in a legend.
// Wider matrices than fit kTextWidth are split into blocks of scenarios.
std::string render_matrix(const results::MatrixResult& m, const TextOptions& options);
// The verdict in one line: "matrix matches <path> (324 cells)" or
// "1 cell differs from <path>" (plus "interrupted: ..." when it was).
std::string render_verdict(const results::MatrixResult& m, const TextOptions& options);
std::string render_counterexample(const results::CellResult& cell, const results::ViolationResult& v,
                                  const TextOptions& options);
// `options` with the task columns narrowed (not below 24) so that the
// transcript of `cex` fits kTextWidth when it can.
TextOptions fitted_to_width(const results::Counterexample& cex, TextOptions options);
// A cell that did not finish ("crashed: SIGSEGV", "exited: 0", "hung: ..."):
// what its process did, in which run, and the command that replays that run.
std::string render_failure(const results::CellResult& cell, const results::CellFailure& failure,
                           const TextOptions& options);
// The verdict, the matrix, the counterexamples (see show_all), the cells that
// differ, where the reports are, and the verdict again as the last line.
std::string render_text(const results::MatrixResult& m, const TextOptions& options);

}  // namespace twice::reports
