#include "results/model.h"

#include <algorithm>

namespace twice::results {

std::vector<std::string> CellResult::observed() const {
  std::vector<std::string> out;
  for (const auto& v : violations) out.push_back(v.invariant);
  return out;
}

bool CellResult::proof_missing() const {
  if (!proof_required) return false;
  if (!exhaustive || !exhaustive->complete || !violations.empty() || !failures.empty()) return true;
  const ProofRequirement& r = *proof_required;
  const int bound = exhaustive->preemption_bound;
  const bool wide_enough = (bound < 0 || (r.preemption_bound >= 0 && bound >= r.preemption_bound)) &&
                           exhaustive->max_faults >= r.max_faults;
  return !wide_enough;
}

bool MatrixResult::all_matched() const {
  return !interrupted && std::all_of(cells.begin(), cells.end(), [](const CellResult& c) { return c.matched; });
}

void MatrixResult::add(std::optional<CellResult> c) {
  if (!c) {
    interrupted = true;
    return;
  }
  if (c->exhaustive && c->exhaustive->interrupted) interrupted = true;
  if (c->cut_short) interrupted = true;
  cells.push_back(std::move(*c));
}

const CellResult* MatrixResult::cell(const std::string& handler, const std::string& scenario) const {
  for (const auto& c : cells)
    if (c.handler == handler && c.scenario == scenario) return &c;
  return nullptr;
}

}  // namespace twice::results
