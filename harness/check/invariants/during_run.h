// The invariants observed during a run, because the database at quiescence
// no longer shows them, one unit each:
//   - AckBeforeCommit: at a payment's first ack, was its credit (or refund
//     flag) committed? If not, that is a violation when the ack came early
//     (respond_now, before the handler's work was done) or the credit is
//     committed later; an ack for a payment never kept is lost_payment's.
//   - AcceptedInvalid: an invalid notify (forged, tampered, unknown order,
//     wrong amount, replayed) whose task committed a change.
// Told what happens by the run's wiring, on the scheduler's side.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "check/violation.h"
#include "env/raw_connection.h"
#include "twice/schema.h"
#include "twice/time.h"

namespace twice::check {

// True when `order_no` has a committed credit or refund flag now.
bool settled_in_database(env::RawConnection& db, const Schema& schema, const std::string& order_no);

class AckBeforeCommit {
 public:
  AckBeforeCommit(env::RawConnection& db, const Schema& schema) : db_(db), schema_(schema) {}
  // The gateway took a reply as an ack for payment `payment` of `order_no`.
  void acked(std::size_t payment, const std::string& order_no, Micros at, bool early);
  // At quiescence.
  void judge(std::vector<Violation>& out);

 private:
  struct EarlyAck {
    std::string order_no;
    Micros at;
    bool while_working;  // answered with respond_now(), before the handler returned
  };
  env::RawConnection& db_;
  const Schema& schema_;
  std::set<std::size_t> checked_;
  std::vector<EarlyAck> early_;
};

class AcceptedInvalid {
 public:
  // `task` ("T4") served invalid notify `event_id` for `order_no`, which is
  // invalid because `reason`, and committed a change.
  void committed(const std::string& order_no, const std::string& task, const std::string& event_id,
                 const std::string& reason);
  const std::set<std::string>& orders() const { return orders_; }
  void judge(std::vector<Violation>& out) const;

 private:
  std::vector<Violation> found_;
  std::set<std::string> orders_;
};

}  // namespace twice::check
