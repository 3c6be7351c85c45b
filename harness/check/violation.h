// Violation: one broken invariant found after a run, and the catalogue of
// invariants with their one-line meanings (for `twice list` and reports).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace twice::check {

struct Violation {
  std::string invariant;  // "double_credit", "lost_update", "lost_payment", ..., "stuck"
  std::string subject;    // the order or account it concerns: "O-1001", "alice"
  std::string detail;     // one sentence for people
};

struct InvariantInfo {
  std::string_view name;
  std::string_view violated_when;
};

const std::vector<InvariantInfo>& invariants();
bool is_invariant(std::string_view name);

}  // namespace twice::check
