// The invariants judged at quiescence, one unit (one file) each: a function
// from the run's Facts to the violations it finds, in a stable order (the
// gateway's order of payments, the oracle's order of rows).
// A new one: a file here, its declaration below, its row in kQuiescent
// (check/checker.cpp), and its entry in the catalogue (check/invariant.cpp).
#pragma once

#include <vector>

#include "check/facts.h"
#include "check/violation.h"

namespace twice::check {

using Findings = std::vector<Violation>;

void judge_double_credit(const Facts& facts, Findings& out);
void judge_lost_refund(const Facts& facts, Findings& out);
void judge_double_refund(const Facts& facts, Findings& out);
void judge_unpaid_credit(const Facts& facts, Findings& out);
void judge_lost_payment(const Facts& facts, Findings& out);
void judge_illegal_transition(const Facts& facts, Findings& out);
void judge_payload_missing(const Facts& facts, Findings& out);
void judge_lost_update(const Facts& facts, Findings& out);
void judge_wrong_amount(const Facts& facts, Findings& out);
// Over what the external services applied (CheckOptions::effects):
void judge_duplicate_effect(const Facts& facts, Findings& out);
void judge_lost_effect(const Facts& facts, Findings& out);
void judge_effect_without_payment(const Facts& facts, Findings& out);

}  // namespace twice::check
