// Registry<Info>: a process-wide list of named entries, one template for the
// handlers (HandlerInfo, twice/handler.h) and the merchant's background jobs
// (JobInfo, twice/job.h). Filled at static initialisation by the
// TWICE_REGISTER_* macros (the program's own, then each plugin's as `twice`
// loads it), before any run starts; read-only afterwards, and then safe to
// read from any thread. Entries never move once added: a pointer from find()
// stays valid for the life of the process.
//
// The members are defined once, in the twice library (harness/api/), and
// instantiated there for the two Info types: a plugin resolves them against
// the `twice` executable, so there is one registry per process, never one
// per shared library.
#pragma once

#include <deque>
#include <string_view>
#include <vector>

namespace twice {

template <typename Info>
class Registry {
 public:
  static Registry& instance();
  // Returns false (and registers nothing) when the name is taken.
  bool add(Info info);
  const Info* find(std::string_view name) const;
  // Sorted by name.
  std::vector<const Info*> all() const;

 private:
  std::deque<Info> entries_;  // a deque: add() never moves what find() handed out
};

}  // namespace twice
