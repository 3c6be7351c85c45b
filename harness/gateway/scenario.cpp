#include "gateway/scenario.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "gateway/retry_profile.h"
#include "gateway/scenario_digest.h"
#include "gateway/scenario_profile.h"
#include "gateway/scenario_reader.h"
#include "gateway/toml_error.h"

namespace twice::gateway {
namespace {

using scenario_toml::Invalid;
using scenario_toml::Reader;

constexpr std::uintmax_t kMaxScenarioBytes = 1 << 20;

void read_orders(const Reader& r, const toml::node& node, Scenario& s) {
  const auto* arr = node.as_array();
  if (!arr || !arr->is_array_of_tables())
    r.fail(node.source(), "'orders' must be an array of tables: write each order as [[orders]]");
  if (arr->size() > kMaxOrders)
    r.fail(node.source(), fmt::format("{} orders; a scenario has at most {} (docs/scenarios.md)", arr->size(), kMaxOrders));
  std::set<std::string> seen;
  for (const auto& item : *arr) {
    const auto& t = *item.as_table();
    r.only(t, {"order_no", "user", "amount", "currency", "paid_at", "paid", "paid_twice", "refund_after", "closed_at"},
           "[[orders]]");
    OrderSpec o;
    for (const char* required : {"order_no", "user", "amount"})
      if (!t.contains(required)) r.fail(t.source(), fmt::format("an order needs '{}'", required));
    o.order_no = r.text(*t.get("order_no"), "order_no");
    if (o.order_no.empty()) r.fail(t.get("order_no")->source(), "'order_no' must not be empty");
    if (!seen.insert(o.order_no).second)
      r.fail(t.get("order_no")->source(), fmt::format("order '{}' appears twice; order numbers are unique", o.order_no));
    o.user = r.text(*t.get("user"), "user");
    if (o.user.empty()) r.fail(t.get("user")->source(), "'user' must not be empty");
    o.amount = r.integer(*t.get("amount"), "amount", 1, 1'000'000'000'000);
    if (auto* c = t.get("currency")) {
      o.currency = r.text(*c, "currency");
      if (o.currency.size() != 3 ||
          !std::all_of(o.currency.begin(), o.currency.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; }))
        r.fail(c->source(), "'currency' must be a 3-letter ISO 4217 code like \"CNY\"");
    }
    if (auto* p = t.get("paid_at")) o.paid_at = r.duration(*p, "paid_at");
    if (auto* p = t.get("paid")) o.paid = r.boolean(*p, "paid");
    if (auto* p = t.get("paid_twice")) {
      o.paid_twice = r.boolean(*p, "paid_twice");
      if (o.paid_twice && !o.paid) r.fail(p->source(), "'paid_twice' needs a paid order; remove it or drop 'paid = false'");
    }
    const RetryProfile& profile = *find_profile(s.profile);
    if (auto* v = t.get("refund_after")) {
      o.refund_after = r.duration(*v, "refund_after");
      if (o.refund_after <= 0) r.fail(v->source(), "'refund_after' must be longer than 0s: a refund follows the payment");
      if (!o.paid) r.fail(v->source(), "'refund_after' needs a paid order; remove it or drop 'paid = false'");
    }
    if (auto* v = t.get("closed_at")) {
      o.closed_at = r.duration(*v, "closed_at");
      if (o.paid)
        r.fail(v->source(), "'closed_at' needs 'paid = false': the gateway closes only a trade that was never paid");
      if (profile.closed_event_type.empty()) {
        std::string names;
        for (const auto& p : all_profiles())
          if (!p.closed_event_type.empty()) names += (names.empty() ? "" : ", ") + p.name;
        r.fail(v->source(), fmt::format("profile '{}' sends no notification when a trade closes; 'closed_at' needs "
                                        "one of: {}",
                                        profile.name, names));
      }
    }
    s.orders.push_back(std::move(o));
  }
  if (s.orders.empty()) r.fail(node.source(), "a scenario needs at least one [[orders]] entry");
}

std::vector<std::string> names(const Reader& r, const toml::node& n, std::string_view key) {
  const auto* arr = n.as_array();
  if (!arr) r.fail(n.source(), fmt::format("'{}' must be an array of names like [\"ship\", \"mail\"]", key));
  std::vector<std::string> out;
  for (const auto& item : *arr) {
    std::string name = r.text(item, key);
    if (name.empty()) r.fail(item.source(), fmt::format("'{}' holds an empty name", key));
    if (std::find(out.begin(), out.end(), name) != out.end())
      r.fail(item.source(), fmt::format("'{}' names \"{}\" twice", key, name));
    out.push_back(std::move(name));
  }
  return out;
}

// [[services]]: each changes a built-in service (by its name) or adds one.
void read_services(const Reader& r, const toml::node& node, Scenario& s) {
  const auto* arr = node.as_array();
  if (!arr || !arr->is_array_of_tables())
    r.fail(node.source(), "'services' must be an array of tables: write each service as [[services]]");
  s.services = builtin_services();
  std::set<std::string> seen;
  for (const auto& item : *arr) {
    const auto& t = *item.as_table();
    r.only(t,
           {"name", "effects", "idempotency_keys", "retention", "slow", "slow_duration", "unavailable", "timeout",
            "duplicate", "stock"},
           "[[services]]");
    const auto* name = t.get("name");
    if (!name) r.fail(t.source(), "a service needs a 'name', e.g. name = \"warehouse\"");
    const std::string n = r.text(*name, "name");
    if (n.empty()) r.fail(name->source(), "a service's 'name' must not be empty");
    if (!std::all_of(n.begin(), n.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; }))
      r.fail(name->source(), fmt::format("service name '{}' may hold only letters, digits, '-' and '_'", n));
    if (!seen.insert(n).second) r.fail(name->source(), fmt::format("service '{}' appears twice", n));
    auto it = std::find_if(s.services.begin(), s.services.end(), [&](const ServiceSpec& x) { return x.name == n; });
    if (it == s.services.end()) {
      if (!t.contains("effects"))
        r.fail(t.source(), fmt::format("service '{}' is not built in (warehouse, mail, inventory): it needs 'effects', "
                                       "e.g. effects = [\"pay_referral\"]",
                                       n));
      s.services.push_back(ServiceSpec{});
      it = std::prev(s.services.end());
      it->name = n;
    }
    ServiceSpec& sp = *it;
    sp.line = static_cast<int>(t.source().begin.line);
    if (auto* v = t.get("effects")) {
      sp.effects = names(r, *v, "effects");
      if (sp.effects.empty()) r.fail(v->source(), fmt::format("service '{}' declares no effect", n));
    }
    if (auto* v = t.get("idempotency_keys")) sp.idempotency_keys = r.boolean(*v, "idempotency_keys");
    if (auto* v = t.get("retention")) sp.retention = r.duration(*v, "retention");
    if (auto* v = t.get("slow")) sp.slow = r.probability(*v, "slow");
    if (auto* v = t.get("slow_duration")) std::tie(sp.slow_min, sp.slow_max) = r.duration_range(*v, "slow_duration");
    if (auto* v = t.get("unavailable")) sp.unavailable = r.probability(*v, "unavailable");
    if (auto* v = t.get("timeout")) sp.timeout = r.probability(*v, "timeout");
    if (auto* v = t.get("duplicate")) sp.duplicate = r.probability(*v, "duplicate");
    if (auto* v = t.get("stock")) {
      sp.stock = r.integer(*v, "stock", 0, 1'000'000'000);
      // Services::keeps_stock(): only a "decrement" effect reads or changes it.
      if (std::find(sp.effects.begin(), sp.effects.end(), "decrement") == sp.effects.end())
        r.fail(v->source(), fmt::format("service '{}' keeps no stock (only a service whose effects include "
                                        "\"decrement\" does); drop 'stock'",
                                        n));
    }
  }
  // One effect, one service: the checker names an effect without its service.
  std::map<std::string, std::string> owner;
  for (const auto& sp : s.services)
    for (const auto& e : sp.effects)
      if (auto [it, fresh] = owner.emplace(e, sp.name); !fresh)
        r.fail(node.source(), fmt::format("effect '{}' is declared by both '{}' and '{}'; give each service its own "
                                          "effect names",
                                          e, it->second, sp.name));
}

void read(const Reader& r, const toml::table& root, Scenario& s) {
  scenario_toml::refuse_gateway_keys(r, root, "the top level");
  r.only(root,
         {"description", "profile", "gateway", "network", "faults", "attacks", "merchant", "services", "checks",
          "orders"},
         "the top level");
  if (auto* v = root.get("services")) read_services(r, *v, s);
  if (auto* d = root.get("description")) {
    s.description = r.text(*d, "description");
    // `twice list` and the reports show it on one line.
    if (s.description.find_first_not_of(" \t") == std::string::npos)
      r.fail(d->source(), "'description' is empty; say in one line what the scenario does");
    if (s.description.find_first_of("\r\n") != std::string::npos)
      r.fail(d->source(), "'description' spans several lines; say it in one (a longer story goes in a # comment)");
  } else {
    r.fail(root.source(), "a scenario needs a one-line 'description'");
  }
  if (auto* p = root.get("profile")) {
    s.profile = r.text(*p, "profile");
    if (!find_profile(s.profile)) {
      std::string names;
      for (const auto& prof : all_profiles()) names += (names.empty() ? "" : ", ") + prof.name;
      r.fail(p->source(), fmt::format("unknown profile '{}'; allowed: {}", s.profile, names));
    }
  }
  if (auto* g = root.get("gateway")) scenario_toml::read_gateway(r, *g, s);
  if (auto* n = root.get("network")) {
    const auto& t = r.table(*n, "network");
    scenario_toml::refuse_gateway_keys(r, t, "[network]");
    r.only(t, {"latency", "delay"}, "[network]");
    if (auto* v = t.get("latency")) std::tie(s.latency_min, s.latency_max) = r.duration_range(*v, "latency");
    if (auto* v = t.get("delay")) std::tie(s.delay_min, s.delay_max) = r.duration_range(*v, "delay");
  }
  if (auto* f = root.get("faults")) {
    const auto& t = r.table(*f, "faults");
    scenario_toml::refuse_gateway_keys(r, t, "[faults]");
    r.only(t,
           {"duplicate", "max_copies", "duplicate_delay", "ack_loss", "max_attempts", "request_loss", "pause",
            "pause_duration", "crash", "restart_after", "mq_redelivery", "mq_delay", "second_signal",
            "second_signal_delay"},
           "[faults]");
    if (auto* v = t.get("duplicate")) s.duplicate = r.probability(*v, "duplicate");
    if (auto* v = t.get("max_copies")) s.max_copies = static_cast<int>(r.integer(*v, "max_copies", 0, 10));
    if (auto* v = t.get("duplicate_delay"))
      std::tie(s.duplicate_delay_min, s.duplicate_delay_max) = r.duration_range(*v, "duplicate_delay");
    if (auto* v = t.get("max_copies"); v && s.max_copies == 0 && s.duplicate > 0)
      r.fail(v->source(), fmt::format("'max_copies' is 0, so 'duplicate' ({}) can never send a copy; write "
                                      "max_copies = 1 or more, or drop 'duplicate'",
                                      s.duplicate));
    if (auto* v = t.get("ack_loss")) s.ack_loss = r.probability(*v, "ack_loss");
    if (auto* v = t.get("max_attempts")) {
      s.max_attempts = static_cast<int>(r.integer(*v, "max_attempts", 1, 100));
      // It can only cut the schedule short: the gateway never sends more
      // than its schedule holds (Alipay 8 notifications, or [gateway]'s).
      const RetryProfile profile = *profile_of(s);
      const int most = static_cast<int>(profile.retry_after.size()) + 1;
      if (s.max_attempts > most)
        r.fail(v->source(),
               s.gateway.retry_intervals
                   ? fmt::format("'max_attempts' is {}, but [gateway] retry_intervals holds {} wait{}, so at most {} "
                                 "attempt{}; write max_attempts = {} or less, or add waits to retry_intervals",
                                 s.max_attempts, most - 1, most == 2 ? "" : "s", most, most == 1 ? "" : "s", most)
                   : fmt::format("'max_attempts' is {}, but profile '{}' sends at most {} attempts; write "
                                 "max_attempts = {} or less, or omit it for the whole schedule",
                                 s.max_attempts, profile.name, most, most));
    }
    if (auto* v = t.get("request_loss")) s.request_loss = r.probability(*v, "request_loss");
    if (auto* v = t.get("pause")) s.pause = r.probability(*v, "pause");
    if (auto* v = t.get("pause_duration")) std::tie(s.pause_min, s.pause_max) = r.duration_range(*v, "pause_duration");
    if (auto* v = t.get("crash")) s.crash = r.probability(*v, "crash");
    if (auto* v = t.get("restart_after")) std::tie(s.restart_min, s.restart_max) = r.duration_range(*v, "restart_after");
    if (auto* v = t.get("mq_redelivery")) s.mq_redelivery = r.probability(*v, "mq_redelivery");
    if (auto* v = t.get("mq_delay")) std::tie(s.mq_delay_min, s.mq_delay_max) = r.duration_range(*v, "mq_delay");
    if (auto* v = t.get("second_signal")) {
      s.second_signal = r.probability(*v, "second_signal");
      const RetryProfile& profile = *find_profile(s.profile);
      if (s.second_signal > 0 && profile.second_paid_event_type.empty()) {
        std::string names;
        for (const auto& p : all_profiles())
          if (!p.second_paid_event_type.empty())
            names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", p.name, p.second_paid_event_type);
        r.fail(v->source(), fmt::format("profile '{}' sends no second success event for a payment; 'second_signal' "
                                        "needs one of: {}",
                                        profile.name, names));
      }
    }
    if (auto* v = t.get("second_signal_delay"))
      std::tie(s.second_signal_delay_min, s.second_signal_delay_max) = r.duration_range(*v, "second_signal_delay");
  }
  if (auto* a = root.get("attacks")) {
    const auto& t = r.table(*a, "attacks");
    r.only(t, {"forged_signature", "wrong_amount", "wrong_currency", "unknown_order", "replayed", "window"},
           "[attacks]");
    auto count = [&](const char* key, int& out) {
      if (auto* v = t.get(key)) out = static_cast<int>(r.integer(*v, key, 0, kMaxAttacksOfAKind));
    };
    count("forged_signature", s.attacks.forged_signature);
    count("wrong_amount", s.attacks.wrong_amount);
    count("wrong_currency", s.attacks.wrong_currency);
    count("unknown_order", s.attacks.unknown_order);
    count("replayed", s.attacks.replayed);
    if (auto* v = t.get("window")) s.attacks.window = r.duration(*v, "window");
  }
  if (auto* m = root.get("merchant")) {
    const auto& t = r.table(*m, "merchant");
    r.only(t, {"reconciler", "close_after"}, "[merchant]");
    if (auto* v = t.get("reconciler")) s.reconciler = r.boolean(*v, "reconciler");
    if (auto* v = t.get("close_after")) {
      s.close_after = r.duration(*v, "close_after");
      // 0 is how a Scenario says "no closer": written in a file, it asked
      // for a closer and silently got none.
      if (s.close_after <= 0)
        r.fail(v->source(), fmt::format("'close_after' is \"{}\", and no order closer runs for it; give how long an "
                                        "order waits before the closer closes it, e.g. \"30m\", or leave "
                                        "close_after out for no closer",
                                        *v->value<std::string>()));
    }
  }
  if (auto* c = root.get("checks")) {
    const auto& t = r.table(*c, "checks");
    r.only(t, {"payload_required", "effects"}, "[checks]");
    if (auto* v = t.get("payload_required")) s.payload_required = r.boolean(*v, "payload_required");
    if (auto* v = t.get("effects")) {
      s.required_effects = names(r, *v, "effects");
      const auto* arr = v->as_array();
      for (std::size_t i = 0; i < s.required_effects.size(); ++i) {
        const std::string& e = s.required_effects[i];
        bool declared = false;
        for (const auto& sp : services_of(s))
          declared = declared || std::find(sp.effects.begin(), sp.effects.end(), e) != sp.effects.end();
        if (declared) continue;
        std::string all;
        for (const auto& sp : services_of(s))
          for (const auto& d : sp.effects) all += fmt::format("{}{} ({})", all.empty() ? "" : ", ", d, sp.name);
        r.fail(arr->get(i)->source(), fmt::format("effect '{}' is declared by no service; declared: {}; or add a "
                                                  "[[services]] entry whose 'effects' name it",
                                                  e, all));
      }
    }
  }
  if (auto* o = root.get("orders")) read_orders(r, *o, s);
  else r.fail(root.source(), "a scenario needs at least one [[orders]] entry");
  // A replay re-sends a request the gateway really sent: a payment's notify.
  if (s.attacks.replayed > 0 &&
      std::none_of(s.orders.begin(), s.orders.end(), [](const OrderSpec& o) { return o.paid; }))
    r.fail(root["attacks"]["replayed"].node()->source(),
           "'replayed' re-sends a notify the gateway really sent, and no order here is paid: add a paid order or "
           "drop 'replayed'");
}

}  // namespace

const std::vector<ServiceSpec>& builtin_services() {
  static const std::vector<ServiceSpec> kBuiltin = [] {
    std::vector<ServiceSpec> v(3);
    v[0].name = "warehouse";
    v[0].effects = {"ship"};
    v[1].name = "mail";
    v[1].effects = {"mail"};
    v[2].name = "inventory";
    v[2].effects = {"decrement"};
    return v;
  }();
  return kBuiltin;
}

const std::vector<ServiceSpec>& services_of(const Scenario& s) {
  return s.services.empty() ? builtin_services() : s.services;
}

// Why `path` cannot be read as a scenario before TOML sees it: a folder, a
// FIFO (reading it would wait for a writer forever), a device, a symlink loop,
// no permission, a file too large. Empty when it is a readable regular file.
std::string unreadable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return fmt::format("{}: no such file", path);
    if (e == ELOOP) return fmt::format("{}: a loop of symbolic links; point the link at a scenario file", path);
    return fmt::format("{}: cannot read it: {}", path, std::strerror(e));
  }
  if (S_ISDIR(st.st_mode))
    return fmt::format("{}: a folder, not a scenario file; give one of its .toml files, or the folder as --scenarios-dir",
                       path);
  if (!S_ISREG(st.st_mode))
    return fmt::format("{}: not a regular file ({}); give a .toml file", path,
                       S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device");
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxScenarioBytes)
    return fmt::format("{}: {} bytes; a scenario file is at most {} bytes", path, st.st_size, kMaxScenarioBytes);
  if (::access(path.c_str(), R_OK) != 0) return fmt::format("{}: cannot read it: {}", path, std::strerror(errno));
  return {};
}

// Messages quote the file (keys, values, its path): its control characters
// are shown escaped, so that a message stays one line on a terminal.
std::string one_line(const std::string& message) {
  std::string out;
  for (unsigned char ch : message) {
    if (ch == '\n') out += "\\n";
    else if (ch == '\r') out += "\\r";
    else if (ch == '\t') out += "\\t";
    else if (ch < 0x20 || ch == 0x7f) out += fmt::format("\\x{:02x}", ch);
    else out += static_cast<char>(ch);
  }
  return out;
}

StatusOr<Scenario> load_scenario(const std::string& path) {
  Scenario s;
  s.source = path;
  s.name = std::filesystem::path(path).stem().string();
  if (std::string why = unreadable(path); !why.empty()) return Status::error(one_line(why));
  // A cell is named "scenario@engine" (expected.toml, reports): a name with
  // '@' could never be named there.
  if (s.name.find('@') != std::string::npos)
    return Status::error(one_line(fmt::format("{}: a scenario's name holds no '@' (expected.toml reads "
                                              "\"name@postgres\" as scenario \"name\" on an engine, so no line "
                                              "could name this one); rename the file without '@'",
                                              path)));
  try {
    const toml::table root = toml::parse_file(path);
    read(Reader(path), root, s);
    s.digest = scenario_digest(root);
  } catch (const toml::parse_error& e) {
    return Status::error(one_line(toml_error_text(path, e)));
  } catch (const Invalid& e) {
    return Status::error(one_line(e.message));
  }
  return s;
}

StatusOr<std::vector<std::string>> scenario_files(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".toml" && entry.path().filename() != "expected.toml")
      paths.push_back(entry.path().string());
  if (ec) return Status::error(fmt::format("{}: cannot read the scenario folder: {}", dir, ec.message()));
  std::sort(paths.begin(), paths.end());
  return paths;
}

StatusOr<std::vector<Scenario>> load_scenario_dir(const std::string& dir) {
  StatusOr<std::vector<std::string>> paths = scenario_files(dir);
  if (!paths.ok()) return paths.status();
  std::vector<Scenario> out;
  for (const auto& p : *paths) {
    // A folder named like a scenario file: the folder given is the right one,
    // this entry in it is not (load_scenario's own advice would say to give it
    // as --scenarios-dir).
    if (std::error_code dir_ec; std::filesystem::is_directory(p, dir_ec))
      return Status::error(fmt::format("{}: a folder named like a scenario file in the scenarios folder {}; rename "
                                       "it or move it out",
                                       one_line(p), one_line(dir)));
    StatusOr<Scenario> s = load_scenario(p);
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

}  // namespace twice::gateway
