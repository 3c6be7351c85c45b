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
#pragma once

#include <map>
#include <string>
#include <vector>

#include "twice/status_or.h"

namespace twice::explore {

struct Expectation {
  std::vector<std::string> violations;  // sorted; empty: pass
  std::string reason;
  bool listed = false;
};

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
  // The same matrix with `invariant` taken out of every cell's expectation,
  // each such cell's reason led by `because`: for a run that adds the fix of
  // that invariant (`twice run --reconciler` finds the payments whose
  // notifications were lost, so no cell is expected to show lost_payment).
  ExpectedMatrix without(const std::string& invariant, const std::string& because) const;

 private:
  std::string path_;
  std::map<std::pair<std::string, std::string>, Expectation> cells_;
  std::map<std::pair<std::string, std::string>, int> lines_;  // where each cell is written
  std::map<std::string, int> handler_lines_;                  // where each [handler] table starts
};

}  // namespace twice::explore
