// Out-of-line parts of the public value types (Status, Value, Result,
// Transaction, time formatting, the handler registry).
#include <algorithm>
#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include "api/registration.h"
#include "twice/db.h"
#include "twice/handler.h"
#include "twice/job.h"
#include "twice/notify.h"
#include "twice/status.h"
#include "twice/time.h"

namespace twice {

std::string Status::to_string() const {
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kConstraint: return "CONSTRAINT: " + message_;
    case Code::kBusy: return "SQLITE_BUSY: " + message_;
    case Code::kError: return "ERROR: " + message_;
    case Code::kCrashed: return "CRASHED: " + message_;
    case Code::kSerialization: return "SERIALIZATION FAILURE: " + message_;
    case Code::kDeadlock: return "DEADLOCK: " + message_;
    case Code::kLockTimeout: return "LOCK TIMEOUT: " + message_;
  }
  return "?";
}

std::int64_t Value::as_int() const {
  if (auto* i = std::get_if<std::int64_t>(&v_)) return *i;
  if (auto* d = std::get_if<double>(&v_)) return static_cast<std::int64_t>(*d);
  if (auto* s = std::get_if<std::string>(&v_)) {
    std::int64_t out = 0;
    std::from_chars(s->data(), s->data() + s->size(), out);
    return out;
  }
  return 0;
}

double Value::as_real() const {
  if (auto* d = std::get_if<double>(&v_)) return *d;
  return static_cast<double>(as_int());
}

std::string Value::as_text() const {
  if (auto* s = std::get_if<std::string>(&v_)) return *s;
  if (auto* i = std::get_if<std::int64_t>(&v_)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v_)) return fmt::format("{}", *d);
  return "";
}

std::string Value::to_sql() const {
  if (is_null()) return "NULL";
  if (auto* s = std::get_if<std::string>(&v_)) {
    std::string out = "'";
    for (char c : *s) {
      if (c == '\'') out += "''";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    return out + "'";
  }
  return as_text();
}

Reply Reply::ack(const Notify& n) {
  if (n.gateway == "alipay") return Reply{200, "success"};
  if (n.gateway == "wechat-v2")
    return Reply{200, "<xml><return_code><![CDATA[SUCCESS]]></return_code><return_msg><![CDATA[OK]]></return_msg></xml>"};
  if (n.gateway == "adyen") return Reply{202, "[accepted]"};
  return Reply::success();
}

const Value& Result::at(std::size_t row, std::string_view name) const {
  static const Value kNull;
  if (row >= rows.size()) return kNull;
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == name && c < rows[row].size()) return rows[row][c];
  return kNull;
}

Transaction Db::begin(TxMode mode) {
  // A server engine has no IMMEDIATE: its locks are taken row by row, and the
  // isolation level is the connection's (--isolation).
  const char* sql = engine() != Engine::kSqlite ? "BEGIN"
                    : mode == TxMode::kImmediate ? "BEGIN IMMEDIATE"
                                                 : "BEGIN DEFERRED";
  Result r = exec(sql);
  return Transaction(this, r.status);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(other.db_), begin_(std::move(other.begin_)), open_(other.open_) {
  other.open_ = false;
}

Transaction::~Transaction() {
  if (open_ && begin_.ok()) db_->exec("ROLLBACK");
}

Status Transaction::commit() {
  if (!open_ || !begin_.ok()) return Status::error("commit() on a transaction that is not open");
  Result r = db_->exec("COMMIT");
  if (!r.ok()) {
    // A failed COMMIT (SQLITE_BUSY in a deadlock) leaves the transaction open in
    // SQLite; give it up so the caller's error path is the only path.
    db_->exec("ROLLBACK");
  }
  open_ = false;
  return r.status;
}

Status Transaction::rollback() {
  if (!open_ || !begin_.ok()) return Status::OK();
  open_ = false;
  return db_->exec("ROLLBACK").status;
}

std::string format_time(Micros t) {
  const bool neg = t < 0;
  if (neg) t = -t;
  const Micros ms = (t / kMillisecond) % 1000;
  const Micros s = (t / kSecond) % 60;
  const Micros m = (t / kMinute) % 60;
  const Micros h = t / kHour;
  std::string out;
  if (h > 0) out = fmt::format("{}h{:02}m{:02}.{:03}s", h, m, s, ms);
  else if (m > 0) out = fmt::format("{}m{:02}.{:03}s", m, s, ms);
  else out = fmt::format("{}.{:03}s", s, ms);
  return neg ? "-" + out : out;
}

std::string format_duration(Micros d) {
  if (d == 0) return "0s";
  if (d < kMillisecond) return fmt::format("{}us", d);
  if (d >= kSecond && d % kSecond != 0) {
    // Drawn durations are rarely round; above a second, tenths are enough to read.
    const Micros tenths = (d + 50 * kMillisecond) / (100 * kMillisecond);
    Micros s = tenths / 10;
    std::string out;
    if (s >= 3600) { out += fmt::format("{}h", s / 3600); s %= 3600; }
    if (s >= 60 || !out.empty()) { out += fmt::format("{}m", s / 60); s %= 60; }
    return out + fmt::format("{}.{}s", s, tenths % 10);
  }
  if (d % kMillisecond != 0) return fmt::format("{}.{:03}ms", d / kMillisecond, d % kMillisecond);
  if (d % kSecond != 0) return fmt::format("{}ms", d / kMillisecond);
  std::string out;
  Micros s = d / kSecond;
  if (s >= 86400 && s % 86400 == 0) return fmt::format("{}d", s / 86400);
  if (s >= 3600) { out += fmt::format("{}h", s / 3600); s %= 3600; }
  if (s >= 60) { out += fmt::format("{}m", s / 60); s %= 60; }
  if (s > 0) out += fmt::format("{}s", s);
  return out;
}

std::optional<Micros> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Micros total = 0;
  Micros last_scale = INT64_MAX;  // units from largest to smallest, each once: "1h30m", not "1m1h" or "5s5s"
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t n = 0;
    auto [p, ec] = std::from_chars(text.data() + i, text.data() + text.size(), n);
    if (ec != std::errc() || n < 0) return std::nullopt;
    i = static_cast<std::size_t>(p - text.data());
    std::size_t j = i;
    while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    const std::string_view unit = text.substr(i, j - i);
    Micros scale;
    if (unit == "us") scale = 1;
    else if (unit == "ms") scale = kMillisecond;
    else if (unit == "s") scale = kSecond;
    else if (unit == "m") scale = kMinute;
    else if (unit == "h") scale = kHour;
    else if (unit == "d") scale = 24 * kHour;
    else return std::nullopt;
    if (scale >= last_scale) return std::nullopt;
    last_scale = scale;
    // A duration past what Micros holds is not a duration (it would wrap).
    Micros part = 0;
    if (__builtin_mul_overflow(n, scale, &part) || __builtin_add_overflow(total, part, &total)) return std::nullopt;
    i = j;
  }
  return total;
}

template <typename Info>
Registry<Info>& Registry<Info>::instance() {
  static Registry registry;
  return registry;
}

template <typename Info>
bool Registry<Info>::add(Info info) {
  if (find(info.name)) return false;
  entries_.push_back(std::move(info));
  return true;
}

template <typename Info>
const Info* Registry<Info>::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

template <typename Info>
std::vector<const Info*> Registry<Info>::all() const {
  std::vector<const Info*> out;
  for (const auto& e : entries_) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

template class Registry<HandlerInfo>;
template class Registry<JobInfo>;

namespace detail {
JobRegistration::JobRegistration(std::string name, std::string description,
                                 std::function<std::unique_ptr<Job>(Micros)> make) {
  using Record = env::RegistrationRecord;
  Record::Refused refused = Record::Refused::kNo;
  const std::string named = name;
  if (name.empty())
    refused = Record::Refused::kEmptyName;
  else if (!JobRegistry::instance().add(JobInfo{std::move(name), std::move(description), std::move(make)}))
    refused = Record::Refused::kNameTaken;
  // The plugin loader refuses a plugin whose job was not registered.
  env::record_registration({Record::Kind::kJob, TWICE_API_VERSION, named, refused});
}
}  // namespace detail

}  // namespace twice
