// Violation: one broken invariant found after a run: which, about what, and
// one sentence for people. The invariant is spelt by its catalogue name
// (check/invariant.h), as the result model and the reports carry it.
#pragma once

#include <string>

#include "check/invariant.h"

namespace twice::check {

struct Violation {
  std::string invariant;  // "double_credit", "lost_update", "lost_payment", ..., "stuck"
  std::string subject;    // the order or account it concerns: "O-1001", "alice"
  std::string detail;     // one sentence for people

  Violation() = default;
  Violation(Invariant id, std::string subject_, std::string detail_)
      : invariant(name_of(id)), subject(std::move(subject_)), detail(std::move(detail_)) {}
  bool is(Invariant id) const { return invariant == name_of(id); }
};

}  // namespace twice::check
