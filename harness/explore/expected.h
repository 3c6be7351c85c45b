// ExpectedMatrix: scenarios/expected.toml, the reviewed list of what each
// handler must show on each scenario: "pass", or the violations a known-buggy
// handler must keep showing (the canaries), each with a one-line reason.
//
//   [check-then-act]
//   concurrent-duplicates = "double_credit: both deliveries read WAIT_PAY before either writes PAID"
//
// A cell not listed is expected to pass.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace twice::explore {

struct Expectation {
  std::vector<std::string> violations;  // sorted; empty: pass
  std::string reason;
  bool listed = false;
};

class ExpectedMatrix {
 public:
  // On error returns false with "file:line: what is wrong" in `error`.
  bool load(const std::string& path, std::string& error);
  Expectation get(const std::string& handler, const std::string& scenario) const;
  // Every (handler, scenario) the file names, for checking it against what exists.
  std::vector<std::pair<std::string, std::string>> cells() const;

 private:
  std::map<std::pair<std::string, std::string>, Expectation> cells_;
};

}  // namespace twice::explore
