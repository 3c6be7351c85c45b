#include "services/services.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace twice::services {

std::vector<fault::ServiceFaultRates> fault_rates(const std::vector<gateway::ServiceSpec>& specs) {
  std::vector<fault::ServiceFaultRates> out;
  out.reserve(specs.size());  // built every run: one allocation, not one per doubling
  for (const auto& s : specs)
    out.push_back({s.name, s.slow, s.slow_min, s.slow_max, s.unavailable, s.timeout, s.duplicate});
  return out;
}

Services::Services(const std::vector<gateway::ServiceSpec>& specs, sim::Scheduler& scheduler, fault::FaultPlan& faults)
    : scheduler_(scheduler), faults_(faults) {
  states_.reserve(specs.size());
  for (const auto& s : specs) states_.push_back(State{&s, {}, s.stock});
}

Services::State* Services::find(std::string_view service) {
  for (auto& s : states_)
    if (s.spec->name == service) return &s;
  return nullptr;
}

// A stock-keeping service (one with a "decrement" effect) also answers the
// queries "read" and "write": another team's inventory API, as a
// read-modify-write client uses it.
static bool keeps_stock(const gateway::ServiceSpec& spec) {
  return std::find(spec.effects.begin(), spec.effects.end(), "decrement") != spec.effects.end();
}

bool Services::offers(const State& s, std::string_view effect) const {
  const auto& e = s.spec->effects;
  if (std::find(e.begin(), e.end(), effect) != e.end()) return true;
  return keeps_stock(*s.spec) && (effect == "read" || effect == "write");
}

void Services::record(const State& s, const ServiceRequest& request, std::string what, std::string result) {
  if (!scheduler_.tracing()) return;
  std::string text = fmt::format("{}: {} {}", s.spec->name, what, request.order_no);
  if (!request.body.empty()) text += fmt::format(" ({})", request.body);
  if (!request.idempotency_key.empty()) text += fmt::format(" key {}", request.idempotency_key);
  scheduler_.record(sim::TraceKind::kService, std::move(text), std::move(result));
}

ServiceReply Services::apply(State& s, const ServiceRequest& request, bool copy) {
  const std::string what = copy ? request.effect + " (the copy)" : request.effect;
  auto applied = [&](const std::string& effect) {
    applied_.push_back(
        AppliedEffect{scheduler_.now(), scheduler_.current(), s.spec->name, effect, request.order_no, request.idempotency_key});
  };
  if (request.effect == "read") {
    record(s, request, what, fmt::format("qty {}", s.stock));
    return {Status::OK(), fmt::format("qty {}", s.stock)};
  }
  if (request.effect == "write") {
    std::int64_t qty = 0;
    const std::string& b = request.body;
    const auto [end, ec] = std::from_chars(b.data(), b.data() + b.size(), qty);
    if (ec != std::errc() || end != b.data() + b.size() || qty < 0) {
      record(s, request, what, "refused: the body must be the new quantity");
      return {Status::error(fmt::format("{}: write needs a quantity, got \"{}\"", s.spec->name, b)), {}};
    }
    // A write that lowers the stock applies that many decrements for the order.
    for (std::int64_t i = qty; i < s.stock; ++i) applied("decrement");
    const std::int64_t old = s.stock;
    s.stock = qty;
    record(s, request, what, fmt::format("qty {} -> {}", old, qty));
    return {Status::OK(), fmt::format("qty {}", qty)};
  }
  if (request.effect == "decrement" && keeps_stock(*s.spec)) {
    if (s.stock <= 0) {
      record(s, request, what, "refused: out of stock");
      return {Status::error(fmt::format("{}: out of stock", s.spec->name)), "qty 0"};
    }
    --s.stock;
    applied("decrement");
    record(s, request, what, fmt::format("applied, qty {}", s.stock));
    return {Status::OK(), fmt::format("qty {}", s.stock)};
  }
  applied(request.effect);
  const int n = ++s.served;
  record(s, request, what, fmt::format("applied ({} #{})", request.effect, n));
  return {Status::OK(), fmt::format("{} #{}", request.effect, n)};
}

ServiceReply Services::call(std::string_view service, const ServiceRequest& request) {
  State* s = find(service);
  if (!s) {
    if (scheduler_.tracing())
      scheduler_.record(sim::TraceKind::kNote, fmt::format("call {}: no such service in this scenario", service));
    return {Status::error(fmt::format("{}: no such service", service)), {}};
  }
  if (!offers(*s, request.effect)) {
    record(*s, request, request.effect, "refused: not an effect this service declares");
    return {Status::error(fmt::format("{}: no effect '{}'", service, request.effect)), {}};
  }
  const std::string name = s->spec->name;
  if (faults_.fires(fault::FaultSite::kServiceSlow, name)) {
    const Micros d = faults_.duration(fault::FaultSite::kServiceSlowDuration, name);
    faults_.trace(fault::FaultSite::kServiceSlow,
                  [&] { return fmt::format("{} is slow: {} before it acts", name, format_duration(d)); });
    scheduler_.sleep_for(d);
  }
  if (faults_.fires(fault::FaultSite::kServiceUnavailable, name)) {
    faults_.trace(fault::FaultSite::kServiceUnavailable,
                  [&] { return fmt::format("{} is unavailable: nothing applied", name); });
    return {Status::error(fmt::format("{}: unavailable", name)), {}};
  }
  const bool keyed = s->spec->idempotency_keys && !request.idempotency_key.empty();
  auto remembered = [&]() -> const Remembered* {
    if (!keyed) return nullptr;
    const auto it = s->keys.find(request.idempotency_key);
    if (it == s->keys.end() || scheduler_.now() - it->second.at >= s->spec->retention) return nullptr;
    return &it->second;
  };
  ServiceReply reply;
  if (const Remembered* r = remembered()) {
    record(*s, request, request.effect, "replayed: the key's first answer, nothing applied");
    reply = r->reply;
  } else {
    reply = apply(*s, request, false);
    if (keyed) s->keys[request.idempotency_key] = Remembered{scheduler_.now(), reply};
  }
  if (faults_.fires(fault::FaultSite::kServiceDuplicate, name)) {
    faults_.trace(fault::FaultSite::kServiceDuplicate, [&] { return fmt::format("{} gets the request twice", name); });
    if (remembered()) record(*s, request, request.effect + " (the copy)", "replayed: nothing applied");
    else (void)apply(*s, request, true);
  }
  if (faults_.fires(fault::FaultSite::kServiceTimeout, name)) {
    faults_.trace(fault::FaultSite::kServiceTimeout,
                  [&] { return fmt::format("{} acted, but the caller times out waiting for its answer", name); });
    return {Status::error(fmt::format("{}: timed out", name)), {}};
  }
  if (scheduler_.killed()) return {Status::crashed(), {}};
  return reply;
}

}  // namespace twice::services
