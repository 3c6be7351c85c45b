// The invariants observed during a run, because the database at quiescence
// no longer shows them, one unit each:
//   - AckBeforeCommit: at a payment's first ack, was its credit (or refund
//     flag) committed? If not, that is a violation when the ack came early
//     (respond_now, before the handler's work was done) or the credit is
//     committed later; an ack for a payment never kept is lost_payment's.
//   - AcceptedInvalid: an invalid notify (forged, tampered, unknown order,
//     wrong amount, replayed) whose task committed a change to what the
//     Schema's oracle queries read, that the gateway's ledger did not justify
//     when it committed.
// Told what happens by the run's wiring, on the scheduler's side.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "check/violation.h"
#include "env/commit_watch.h"
#include "env/raw_connection.h"
#include "gateway/gateway.h"
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
  // One invalid delivery: `task` ("T4") serves notify `event_id` for
  // `order_no`, which is invalid because `reason`.
  struct Delivery {
    std::string order_no, task, event_id, reason;
  };
  // A watch over the commits of the task serving `delivery` (hand it to the
  // task's Env). Around each commit it reads what the Schema's oracle
  // queries say of the order (credits, reversals, refund flag, status, stored
  // payload) and of every account (balance, ledger sum). A commit that
  // changed none of it (an audit row) accepted nothing. One that changed it
  // is an acceptance unless the gateway's ledger `payments` justified every
  // change at that moment and the task had asked the gateway about the order
  // (Env::query_payment) and been answered with a payment: credits, a
  // refund flag or a payload only for a payment the gateway settled, at most
  // as many credits as it settled and reversals as it refunded, a status the
  // gateway reached, the order's user's balance moved by whole multiples of
  // the order's amount and no other account moved. A task is found once.
  // `db` and `payments` must outlive the watch.
  std::unique_ptr<env::CommitWatch> watch(env::RawConnection& db, const Schema& schema,
                                          const std::vector<gateway::PaymentRecord>& payments, Delivery delivery);
  const std::set<std::string>& orders() const { return orders_; }
  void judge(std::vector<Violation>& out) const;

 private:
  class Watch;
  std::vector<Violation> found_;
  std::set<std::string> orders_;
};

}  // namespace twice::check
