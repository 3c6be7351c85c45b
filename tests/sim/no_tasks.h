// NoTasks: a TaskView for strategies fed enabled sets by hand, whose tasks
// have nothing pending and wrote no notes.
#pragma once

#include <string>
#include <vector>

#include "sim/strategy.h"

namespace twice::sim {

class NoTasks final : public TaskView {
 public:
  const std::string& pending(int) const override { return empty_; }
  const std::vector<std::string>& notes(int) const override { return none_; }

 private:
  std::string empty_;
  std::vector<std::string> none_;
};

}  // namespace twice::sim
