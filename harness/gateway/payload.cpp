#include "gateway/payload.h"

#include <cstddef>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace twice::gateway {

std::string payload_of(const Notify& n) {
  // nlohmann escapes whatever an order number holds; the payload is untrusted downstream.
  const EventKind kind = event_kind(n);
  nlohmann::json body{{"id", n.event_id},
                      {"event_type", n.event_type},
                      {"out_trade_no", n.out_trade_no},
                      {"transaction_id", n.transaction_id},
                      {"amount", {{"total", n.amount}, {"currency", n.currency}}},
                      {"trade_state", kind == EventKind::kClosed     ? "CLOSED"
                                      : kind == EventKind::kRefunded ? "REFUND"
                                                                     : "SUCCESS"}};
  if (n.refund_amount > 0) body["amount"]["refund"] = n.refund_amount;
  return body.dump();
}

namespace {

// The fields payload_of() reads besides the event id, which is the entry's
// key (event_kind() reads event_type and refund_amount), and the body they gave.
struct Entry {
  std::string event_type, out_trade_no, transaction_id, currency;
  std::int64_t amount = 0, refund_amount = 0;
  std::string body;

  bool matches(const Notify& n) const {
    return amount == n.amount && refund_amount == n.refund_amount && out_trade_no == n.out_trade_no &&
           event_type == n.event_type && transaction_id == n.transaction_id && currency == n.currency;
  }
};

}  // namespace

std::string cached_payload(const Notify& n) {
  // By event id, which tells the bodies of one run apart; a hit still
  // compares every other field the body holds. Bounded: past kMost distinct
  // ids (runs with thousands of orders) it starts again empty.
  constexpr std::size_t kMost = 4096;
  thread_local std::unordered_map<std::string, Entry> entries;
  if (entries.size() >= kMost && !entries.count(n.event_id)) entries.clear();
  auto [it, added] = entries.try_emplace(n.event_id);
  Entry& e = it->second;
  if (!added && e.matches(n)) return e.body;
  e.event_type = n.event_type;
  e.out_trade_no = n.out_trade_no;
  e.transaction_id = n.transaction_id;
  e.currency = n.currency;
  e.amount = n.amount;
  e.refund_amount = n.refund_amount;
  e.body = payload_of(n);
  return e.body;
}

}  // namespace twice::gateway
