// Text report: the matrix and each counterexample, for a terminal. Colour only
// when asked (the CLI asks when stdout is a TTY). Reads only the result model.
#pragma once

#include <string>

#include "results/model.h"

namespace twice::reports {

struct TextOptions {
  bool color = false;
  int column_width = 46;  // width of one task's column in a transcript
};

std::string render_matrix(const results::MatrixResult& m, const TextOptions& options);
std::string render_counterexample(const results::CellResult& cell, const results::ViolationResult& v,
                                  const TextOptions& options);
// The matrix, then every counterexample, then a one-line summary.
std::string render_text(const results::MatrixResult& m, const TextOptions& options);

}  // namespace twice::reports
