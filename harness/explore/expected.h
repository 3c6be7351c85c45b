// ExpectedMatrix: scenarios/expected.toml, the reviewed list of what each
// handler must show on each scenario: "pass", or the violations a known-buggy
// handler must keep showing (the canaries), each with a one-line reason.
//
//   [check-then-act]
//   concurrent-duplicates = "double_credit: both deliveries read WAIT_PAY before either writes PAID"
//
// A cell not listed is expected to pass. A cell on a server engine
// ("concurrent-duplicates@postgres/read-committed") not listed is expected to
// be what the same cell is on SQLite; list only where the engine changes it.
//
// A run with the reconciler job (`twice run --reconciler`) is judged by the
// same cells, except where the reconciler changes the verdict; those cells
// are listed again in [reconciler."<handler>"] tables:
//
//   [reconciler."check-then-act"]
//   lost-notifications = "pass: the reconciler finds the payment every notify of which was lost"
//
// The cells an exhaustive run (`--prove`, `--strategy exhaustive`) must
// prove, each with the bounds it must be proved at, are listed in
// [proved."<handler>"] tables; such a cell is expected to pass too:
//
//   [proved."unique-key+cas"]
//   concurrent-duplicates = { preemption-bound = 2, max-faults = 1 }
//
// Only SQLite cells are required proved (the reduction runs there only).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model.h"
#include "twice/status_or.h"

namespace twice::explore {

struct Expectation {
  std::vector<std::string> violations;  // sorted; empty: pass
  std::string reason;
  bool listed = false;
  // [proved."<handler>"]: an exhaustive search must prove the cell at these bounds.
  std::optional<results::ProofRequirement> proved = std::nullopt;
};

// The top-level table that holds the reconciler's cells (so no handler's
// expectations can be written under this name).
inline constexpr std::string_view kReconcilerSection = "reconciler";
// The top-level table that holds the cells an exhaustive run must prove.
inline constexpr std::string_view kProvedSection = "proved";

class ExpectedMatrix {
 public:
  // Reads and checks `path`; an error says "file:line: what is wrong".
  static StatusOr<ExpectedMatrix> load(const std::string& path);
  Expectation get(const std::string& handler, const std::string& scenario) const;
  // Every (handler, scenario) the file names, for checking it against what exists.
  std::vector<std::pair<std::string, std::string>> cells() const;
  // Every handler and scenario the file names must exist: a misspelt row
  // would otherwise be read by no run, and its cells silently taken as pass.
  // An error says "file:line: unknown handler ...".
  Status check_names(const std::vector<std::string>& handlers, const std::vector<std::string>& scenarios) const;
  // The matrix a run with the reconciler job is judged by: each cell the
  // [reconciler."<handler>"] tables list replaces the cell of that name, and
  // also that scenario's cells on server engines (unless the section lists
  // them too), which without the reconciler may say something else. Every
  // other cell is as without the reconciler: it finds only payments whose
  // order still waits, so a handler that acked a payment and moved its order
  // (PAID, CLOSED) without crediting it keeps its lost_payment. The
  // [proved] cells are dropped: they were proved without the reconciler.
  ExpectedMatrix with_reconciler() const;
  // True when any section names a cell of `scenario` (on any engine).
  bool names_scenario(const std::string& scenario) const;
  // This matrix without any cell of `scenario`: each of them then expects a
  // pass. For a scenario file of one's own that shares a bundled one's name,
  // which the bundled matrix must not judge.
  ExpectedMatrix without_scenario(const std::string& scenario) const;

 private:
  using Cell = std::pair<std::string, std::string>;  // handler, scenario
  std::string path_;
  std::map<Cell, Expectation> cells_;
  std::map<Cell, Expectation> reconciler_cells_;  // the [reconciler."<handler>"] tables
  std::map<Cell, results::ProofRequirement> proved_;  // the [proved."<handler>"] tables
  std::map<Cell, int> lines_;                     // where each cell is written (either section)
  std::map<Cell, int> proved_lines_;              // where each [proved] cell is written
  std::map<std::string, int> handler_lines_;      // where each handler's table starts (any section)
};

}  // namespace twice::explore
