#include "gateway/scenario_profile.h"

#include <numeric>

#include <fmt/format.h>

#include "gateway/scenario_reader.h"

namespace twice::gateway {

namespace scenario_toml {

void refuse_gateway_keys(const Reader& r, const toml::table& t, std::string_view where) {
  struct Key {
    const char* name;
    const char* what;
    const char* example;
  };
  static constexpr Key kKeys[] = {{"timeout", "how long the gateway waits for an answer", "\"3s\""},
                                  {"retry_intervals", "the gateway's waits between attempts", "[\"15s\", \"30s\"]"}};
  for (const Key& k : kKeys)
    if (const auto* v = t.get(k.name))
      r.fail(v->source(), fmt::format("'{}' belongs in [gateway], not {}: it is {}; write [gateway] then {} = {}",
                                      k.name, where, k.what, k.name, k.example));
}

void read_gateway(const Reader& r, const toml::node& node, Scenario& s) {
  const toml::table& t = r.table(node, "gateway");
  r.only(t, {"timeout", "retry_intervals"}, "[gateway]");
  if (const auto* v = t.get("timeout")) {
    const Micros timeout = r.duration(*v, "timeout");
    if (timeout <= 0)
      r.fail(v->source(), "'timeout' must be longer than 0s: how long the gateway waits for an answer, e.g. \"5s\"");
    s.gateway.timeout = timeout;
  }
  if (const auto* v = t.get("retry_intervals")) {
    const auto* waits = v->as_array();
    if (!waits)
      r.fail(v->source(), "'retry_intervals' must be an array of durations, the waits between attempts, like "
                          "[\"15s\", \"30s\", \"3m\"]");
    if (waits->size() > kMaxRetryIntervals)
      r.fail(v->source(), fmt::format("'retry_intervals' holds {} waits; at most {} (100 attempts, the most "
                                      "max_attempts allows)",
                                      waits->size(), kMaxRetryIntervals));
    std::vector<Micros> out;
    for (std::size_t i = 0; i < waits->size(); ++i) {
      const toml::node& w = *waits->get(i);
      const std::string name = fmt::format("retry_intervals[{}]", i);
      const Micros wait = r.duration(w, name);
      if (wait <= 0)
        r.fail(w.source(), fmt::format("'{}' must be longer than 0s: the gateway waits before it retries", name));
      out.push_back(wait);
    }
    const Micros total = std::accumulate(out.begin(), out.end(), Micros{0});
    if (total > kMaxDuration)
      r.fail(v->source(), fmt::format("'retry_intervals' add up to {}; a schedule spans at most {} (Adyen's, the "
                                      "longest, retries for 30 days)",
                                      exact_duration(total), format_duration(kMaxDuration)));
    s.gateway.retry_intervals = std::move(out);
  }
}

}  // namespace scenario_toml

std::optional<RetryProfile> profile_of(const Scenario& s) {
  const RetryProfile* known = find_profile(s.profile);
  if (!known) return std::nullopt;
  RetryProfile p = *known;
  if (s.gateway.timeout) p.timeout = *s.gateway.timeout;
  if (s.gateway.retry_intervals) p.retry_after = *s.gateway.retry_intervals;
  return p;
}

const RetryProfile* played_profile(const Scenario& s, std::optional<RetryProfile>& own) {
  if (!s.gateway.timeout && !s.gateway.retry_intervals) return find_profile(s.profile);
  own = profile_of(s);
  return own ? &*own : nullptr;
}

std::optional<PlayedGateway> played_gateway(const Scenario& s) {
  const RetryProfile* known = find_profile(s.profile);
  if (!known) return std::nullopt;
  PlayedGateway out{*profile_of(s), {}, {}, 0};
  // The gateway sends no more than max_attempts: the waits past them are never met.
  std::vector<Micros>& waits = out.profile.retry_after;
  if (s.max_attempts > 0 && static_cast<std::size_t>(s.max_attempts) - 1 < waits.size()) {
    waits.resize(static_cast<std::size_t>(s.max_attempts) - 1);
    out.cut_by_max_attempts = s.max_attempts;
  }
  out.timeout = {known->timeout_published, out.profile.timeout != known->timeout};
  out.retry_intervals = {known->retry_after_published, out.profile.retry_after != known->retry_after};
  return out;
}

namespace {

// "15s, 30s, 3m, 10m, 20m, … (15 waits, 24h4m in all)": the first five, the count and the span.
std::string schedule_text(const std::vector<Micros>& waits) {
  if (waits.empty()) return "none (no retry)";
  constexpr std::size_t kShown = 5;
  std::string out;
  for (std::size_t i = 0; i < waits.size() && i < kShown; ++i) out += (i ? ", " : "") + exact_duration(waits[i]);
  if (waits.size() > kShown) out += ", …";
  return out + fmt::format(" ({} wait{}, {} in all)", waits.size(), waits.size() == 1 ? "" : "s",
                           exact_duration(std::accumulate(waits.begin(), waits.end(), Micros{0})));
}

// "wechat-v3's published 5s", "alipay's unpublished default 15s".
std::string profile_figure(const RetryProfile& p, bool published, const std::string& figure) {
  return fmt::format("{}'s {} {}", p.name, published ? "published" : "unpublished default", figure);
}

}  // namespace

std::string gateway_departures(const Scenario& s) {
  const std::optional<PlayedGateway> played = played_gateway(s);
  if (!played) return {};
  const RetryProfile& profile = *find_profile(s.profile);
  // The schedule [gateway] sets, before max_attempts cuts it.
  const std::vector<Micros> set = profile_of(s)->retry_after;
  const bool own_schedule = set != profile.retry_after;
  std::vector<std::string> parts;
  if (played->timeout.departs)
    parts.push_back(fmt::format("timeout {} instead of {}", exact_duration(played->profile.timeout),
                                profile_figure(profile, played->timeout.published, exact_duration(profile.timeout))));
  if (own_schedule)
    parts.push_back(fmt::format(
        "retry_intervals {} instead of {}", schedule_text(set),
        profile_figure(profile, played->retry_intervals.published, schedule_text(profile.retry_after))));
  std::string out;
  if (!parts.empty()) {
    out = "[gateway] " + parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) out += "; " + parts[i];
  }
  if (played->cut_by_max_attempts > 0)
    out += fmt::format("{}[faults] max_attempts {} cuts {} to {}", out.empty() ? "" : "; ",
                       played->cut_by_max_attempts,
                       own_schedule ? "them"
                                    : profile_figure(profile, played->retry_intervals.published,
                                                     "retry_intervals " + schedule_text(profile.retry_after)),
                       schedule_text(played->profile.retry_after));
  return out;
}

std::string exact_duration(Micros d) {
  if (d == 0) return "0s";
  struct Unit {
    Micros size;
    const char* name;
  };
  // Days only from two up: "24h4m" is how the gateways write WeChat's schedule, not "1d4m".
  static constexpr Unit kUnits[] = {{24 * kHour, "d"}, {kHour, "h"}, {kMinute, "m"}, {kSecond, "s"},
                                    {kMillisecond, "ms"}, {1, "us"}};
  std::string out;
  for (const Unit& u : kUnits) {
    if (d < u.size || (u.size == 24 * kHour && d < 48 * kHour)) continue;
    out += fmt::format("{}{}", d / u.size, u.name);
    d %= u.size;
  }
  return out;
}

}  // namespace twice::gateway
