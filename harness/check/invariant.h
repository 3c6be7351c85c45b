// Invariant: the typed catalogue of what a run is judged by. Each invariant
// is one small unit (check/invariants/*.cpp) in one of two phases:
//   - observed during the run, because quiescence no longer shows it (an ack
//     while the credit was not committed; an invalid delivery that committed);
//   - judged at quiescence, from the database's oracle queries and the
//     gateway's own ledger (Facts).
// A new invariant: an enumerator here, a row in the catalogue
// (invariant.cpp), and one file under check/invariants/.
// Plain data; safe from any thread.
#pragma once

#include <string_view>
#include <vector>

namespace twice::check {

enum class Invariant {
  kDoubleCredit,
  kLostUpdate,
  kLostPayment,
  kAckBeforeCommit,
  kAcceptedInvalid,
  kIllegalTransition,
  kLostRefund,
  kDoubleRefund,
  kUnpaidCredit,
  kPayloadMissing,
  kDuplicateEffect,
  kLostEffect,
  kEffectWithoutPayment,
  kWrongAmount,
  kStuck,
  kOracleError,
  kJobFailed,
};

enum class Phase { kDuringRun, kAtQuiescence, kHarness };

struct InvariantInfo {
  Invariant id;
  std::string_view name;  // "double_credit": how reports, the CLI and expected.toml spell it
  Phase phase;
  std::string_view violated_when;
};

// Every invariant, in the order `twice list` shows them.
const std::vector<InvariantInfo>& invariants();
std::string_view name_of(Invariant invariant);
bool is_invariant(std::string_view name);
// Every invariant's name, comma-separated, in that order: for messages that list what is allowed.
std::string invariant_names();

}  // namespace twice::check
