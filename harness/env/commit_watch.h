// CommitWatch: what a task's Db and Env tell an observer of the task's
// commits (the checker's accepted_invalid watch over an invalid delivery's
// task, check/invariants/during_run.h): a statement that may publish writes
// is about to run, it did publish them, and the task asked the gateway about
// an order. The Db calls before_publish() in the same scheduling step as the
// statement itself (after any wait for a lock), so that nothing another task
// commits falls between the two reads. Called from the task holding the baton.
#pragma once

#include <string_view>

namespace twice::env {

class CommitWatch {
 public:
  virtual ~CommitWatch() = default;
  // A COMMIT, or a write outside a transaction, is about to run.
  virtual void before_publish() = 0;
  // That statement published writes (they are committed now).
  virtual void published() = 0;
  // The task asked the gateway for `order_no`'s payment (Env::query_payment);
  // `settled`: the gateway answered with one.
  virtual void asked_gateway(std::string_view order_no, bool settled) = 0;
};

}  // namespace twice::env
