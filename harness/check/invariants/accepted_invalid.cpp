// accepted_invalid: an invalid notify's task committed a change to what the
// checker reads (the Schema's oracle queries) that the gateway's own ledger
// did not justify when it committed. What it wrote elsewhere (an audit row of
// a rejected webhook) accepted nothing; a credit of a payment the gateway
// really settled, applied after asking the gateway, is no acceptance either
// (a second such credit is double_credit's).
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "check/invariants/during_run.h"

namespace twice::check {

// Not an anonymous namespace: AcceptedInvalid::Watch keeps these as members.
namespace accepted_invalid_parts {

// What the oracle queries say of one order, and of every account.
struct OracleView {
  int credits = 0;
  int reversals = 0;
  bool flagged = false;
  bool payload = false;
  std::optional<std::string> status;
  struct Account {
    std::int64_t balance = 0, ledger = 0;
    bool operator==(const Account&) const = default;
  };
  std::map<std::string, Account> accounts;  // by user
  bool operator==(const OracleView&) const = default;
};

// Read as committed now (in the middle of a run: RawConnection::find_committed).
// A query that fails reads as no rows, before and after alike.
OracleView read_view(env::RawConnection& db, const Schema& schema, const std::string& order_no) {
  OracleView v;
  auto rows = [&](const std::string& sql, const std::function<void(const env::RowView&)>& f) {
    if (sql.empty()) return;
    db.find_committed(sql, order_no, [&](const env::RowView& row) {
      f(row);
      return false;  // every row of the order
    });
  };
  // An order on several rows counts the largest, as at quiescence (check/facts.cpp).
  rows(schema.credits_sql, [&](const env::RowView& r) {
    if (r.size() > 1) v.credits = std::max(v.credits, static_cast<int>(r.integer(1)));
  });
  rows(schema.reversals_sql, [&](const env::RowView& r) {
    if (r.size() > 1) v.reversals = static_cast<int>(r.integer(1));
  });
  rows(schema.refunds_sql, [&](const env::RowView&) { v.flagged = true; });
  rows(schema.payloads_sql, [&](const env::RowView&) { v.payload = true; });
  rows(schema.statuses_sql, [&](const env::RowView& r) {
    if (r.size() > 1) v.status = std::string(r.text(1));
  });
  if (!schema.balances_sql.empty()) {
    const Result accounts = db.query_committed(schema.balances_sql);
    for (const Row& row : accounts.rows) {
      const env::ValueRowView r(row);
      if (r.size() >= 3) v.accounts[std::string(r.text(0))] = {r.integer(1), r.integer(2)};
    }
  }
  return v;
}

// The gateway's ledger for one order, as it stands now.
struct Ledger {
  int settled = 0;
  bool refunded = false;
  bool closed = false;
  const gateway::OrderSpec* order = nullptr;  // null: an order the gateway does not know
};

Ledger ledger_of(const std::vector<gateway::PaymentRecord>& payments, const std::string& order_no) {
  Ledger l;
  for (const auto& p : payments) {
    if (p.order.order_no != order_no) continue;
    if (!l.order) l.order = &p.order;
    l.settled += p.settled ? 1 : 0;
    l.refunded |= p.refunded;
    l.closed |= p.closed;
  }
  return l;
}

std::string status_text(const std::optional<std::string>& s) { return s ? *s : "none"; }

}  // namespace accepted_invalid_parts

namespace parts = accepted_invalid_parts;

class AcceptedInvalid::Watch final : public env::CommitWatch {
 public:
  Watch(AcceptedInvalid& found, env::RawConnection& db, const Schema& schema,
        const std::vector<gateway::PaymentRecord>& payments, Delivery delivery)
      : found_(found), db_(db), schema_(schema), payments_(payments), delivery_(std::move(delivery)) {}

  void before_publish() override {
    if (!done_) before_ = parts::read_view(db_, schema_, delivery_.order_no);
  }

  void published() override {
    if (done_ || !before_) return;
    const parts::OracleView before = std::move(*before_);
    before_.reset();
    const parts::OracleView after = parts::read_view(db_, schema_, delivery_.order_no);
    if (after == before) return;  // nothing the checker reads changed
    judge(before, after);
  }

  void asked_gateway(std::string_view order_no, bool settled) override {
    if (settled && order_no == delivery_.order_no) asked_ = true;
  }

 private:
  // A change the oracle reads, by this task's commit: justified or not by the
  // gateway's ledger now.
  void judge(const parts::OracleView& b, const parts::OracleView& a) {
    const parts::Ledger g = parts::ledger_of(payments_, delivery_.order_no);
    std::vector<std::string> changes, unjustified;
    auto change = [&](std::string what, bool justified, std::string why = {}) {
      if (!justified) unjustified.push_back(why.empty() ? what : why);
      changes.push_back(std::move(what));
    };
    if (a.credits != b.credits)
      change(fmt::format("credits {} -> {}", b.credits, a.credits), a.credits <= g.settled,
             fmt::format("{} credits for {} settled payment{}", a.credits, g.settled, g.settled == 1 ? "" : "s"));
    if (a.reversals != b.reversals)
      change(fmt::format("reversals {} -> {}", b.reversals, a.reversals), a.reversals <= (g.refunded ? 1 : 0),
             fmt::format("{} reversals for {} refund{}", a.reversals, g.refunded ? 1 : 0, g.refunded ? "" : "s"));
    if (a.flagged != b.flagged)
      change(a.flagged ? "flagged for refund" : "no longer flagged for refund", g.settled > 0,
             "a refund flag for no settled payment");
    if (a.payload != b.payload)
      change(a.payload ? "its payload stored" : "its payload removed", g.settled > 0,
             "a payload stored for no settled payment");
    if (a.status != b.status) {
      const Schema::OrderStates& s = schema_.states;
      const bool reached = a.status && ((*a.status == s.paid && g.settled > 0) ||
                                        (*a.status == s.closed && g.closed) || (*a.status == s.refunded && g.refunded));
      change(fmt::format("status {} -> {}", parts::status_text(b.status), parts::status_text(a.status)), reached,
             fmt::format("status {}, which the gateway never reached", parts::status_text(a.status)));
    }
    for (const auto& [user, now] : a.accounts) {
      const auto was_it = b.accounts.find(user);
      const parts::OracleView::Account was = was_it == b.accounts.end() ? parts::OracleView::Account{} : was_it->second;
      if (now == was) continue;
      const std::int64_t amount = g.order ? g.order->amount : 0;
      const bool own = g.order && user == g.order->user && amount > 0;
      const bool whole = own && (now.balance - was.balance) % amount == 0 && (now.ledger - was.ledger) % amount == 0;
      std::string what = fmt::format("{}'s balance {} -> {}", user, was.balance, now.balance);
      if (now.ledger - was.ledger != now.balance - was.balance)
        what += fmt::format(" (ledger {} -> {})", was.ledger, now.ledger);
      change(what, whole,
             !own ? fmt::format("{}'s balance moved, who did not place {}", user, delivery_.order_no)
                  : fmt::format("{}'s balance moved by {}, not by the order's {}", user, now.balance - was.balance,
                                amount));
    }
    if (asked_ && unjustified.empty()) return;  // what the gateway said it settled, applied
    done_ = true;
    std::string why;
    if (!asked_ && g.settled == 0)
      why = fmt::format("the gateway had settled no payment for {}", delivery_.order_no);
    else if (!asked_)
      why = fmt::format("the task never asked the gateway about {} (query_payment): it took the notify's word",
                        delivery_.order_no);
    else
      why = fmt::format("the gateway's ledger does not justify {}", fmt::join(unjustified, ", "));
    found_.orders_.insert(delivery_.order_no);
    found_.found_.emplace_back(Invariant::kAcceptedInvalid, delivery_.order_no,
                               fmt::format("{} ({}) was invalid: {}; yet its commit changed what the checker reads "
                                           "({}), and {}",
                                           delivery_.task, delivery_.event_id, delivery_.reason,
                                           fmt::join(changes, ", "), why));
  }

  AcceptedInvalid& found_;
  env::RawConnection& db_;
  const Schema& schema_;
  const std::vector<gateway::PaymentRecord>& payments_;
  const Delivery delivery_;
  std::optional<parts::OracleView> before_;
  bool asked_ = false;  // the gateway answered the task with a payment for the order
  bool done_ = false;   // found once: the task's later commits are not read
};

std::unique_ptr<env::CommitWatch> AcceptedInvalid::watch(env::RawConnection& db, const Schema& schema,
                                                         const std::vector<gateway::PaymentRecord>& payments,
                                                         Delivery delivery) {
  return std::make_unique<Watch>(*this, db, schema, payments, std::move(delivery));
}

void AcceptedInvalid::judge(std::vector<Violation>& out) const {
  out.insert(out.end(), found_.begin(), found_.end());
}

}  // namespace twice::check
