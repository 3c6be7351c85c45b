#include <fmt/format.h>

#include "check/invariants/during_run.h"

namespace twice::check {

void AcceptedInvalid::committed(const std::string& order_no, const std::string& task, const std::string& event_id,
                                const std::string& reason) {
  orders_.insert(order_no);
  found_.emplace_back(Invariant::kAcceptedInvalid, order_no,
                      fmt::format("{} ({}) was invalid: {}; yet it committed changes", task, event_id, reason));
}

void AcceptedInvalid::judge(std::vector<Violation>& out) const {
  out.insert(out.end(), found_.begin(), found_.end());
}

}  // namespace twice::check
