#include "gateway/signature.h"

#include <charconv>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

namespace twice::gateway {

namespace {

// OpenSSL's one-shot HMAC() fetches the HMAC implementation and makes a
// context on every call, which cost more than the hash itself (issue #12: 6%
// of a short run). Each thread keeps one context, fetched once, and keyed
// again only when the key changes (a forged notify's wrong key, another
// profile's secret); a NULL key at EVP_MAC_init() restarts with the same key.
class HmacSha256 {
 public:
  HmacSha256() {
    mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac_) ctx_ = EVP_MAC_CTX_new(mac_);
    char digest[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    if (!ctx_ || !EVP_MAC_CTX_set_params(ctx_, params)) throw std::runtime_error("OpenSSL has no HMAC-SHA256");
  }
  ~HmacSha256() {
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
  }
  HmacSha256(const HmacSha256&) = delete;
  HmacSha256& operator=(const HmacSha256&) = delete;

  // The digest of `message` under `key`, in `out` (32 bytes); its length.
  std::size_t digest(std::string_view key, std::string_view message, unsigned char* out) {
    const bool same_key = keyed_ && key == key_;
    const auto* k = reinterpret_cast<const unsigned char*>(key.data());
    if (!EVP_MAC_init(ctx_, same_key ? nullptr : k, same_key ? 0 : key.size(), nullptr))
      throw std::runtime_error("HMAC-SHA256: cannot key the context");
    if (!same_key) {
      key_.assign(key);
      keyed_ = true;
    }
    std::size_t len = 0;
    if (!EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(message.data()), message.size()) ||
        !EVP_MAC_final(ctx_, out, &len, EVP_MAX_MD_SIZE))
      throw std::runtime_error("HMAC-SHA256 failed");
    return len;
  }

 private:
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* ctx_ = nullptr;
  std::string key_;
  bool keyed_ = false;
};

// The digests made lately, by message: the endpoint verifies exactly what
// the gateway signed (the same key, timestamp and payload), and each network
// copy of a notify is verified again; a hit saves the whole HMAC. Kept by
// message rather than as the last four: a burst signs a hundred requests
// before the first of them is verified, and every verify missed (8% of
// BM_Growth/burst/128's instructions). Bounded: past kMost messages it
// starts again empty.
// The entry found or added last is compared first, without hashing the
// message: a verify of what was just signed, the common case of a short run.
class RecentDigests {
 public:
  const std::string* find(std::string_view key, std::string_view message) {
    if (last_ != entries_.end() && last_->first == message && last_->second.key == key) return &last_->second.hex;
    const auto it = entries_.find(message);
    if (it == entries_.end() || it->second.key != key) return nullptr;
    last_ = it;
    return &it->second.hex;
  }
  void add(std::string_view key, std::string_view message, const std::string& hex) {
    if (entries_.size() >= kMost) entries_.clear();
    last_ = entries_.try_emplace(std::string(message)).first;
    last_->second.key.assign(key);
    last_->second.hex = hex;
  }

 private:
  static constexpr std::size_t kMost = 4096;
  struct Entry {
    std::string key, hex;
  };
  // Transparent hashing: find() takes the message as a view, without a copy.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, Entry, Hash, std::equal_to<>>;
  Map entries_;
  Map::iterator last_ = entries_.end();  // valid until the next add()
};

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  thread_local RecentDigests recent;
  if (const std::string* hex = recent.find(key, message)) return *hex;
  thread_local HmacSha256 hmac;
  unsigned char digest[EVP_MAX_MD_SIZE];
  const std::size_t len = hmac.digest(key, message, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(len * 2, '0');
  for (std::size_t i = 0; i < len; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  recent.add(key, message, hex);
  return hex;
}

namespace {

// "<t>.<payload>", what v1 signs, in a buffer per thread (each delivery is
// signed once and verified once: two allocations of a payload's size saved).
std::string_view signed_text(std::int64_t unix_seconds, std::string_view payload) {
  thread_local std::string text;
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, unix_seconds).ptr;
  text.assign(digits, end);
  text += '.';
  text += payload;
  return text;
}

}  // namespace

std::string sign(std::string_view secret, std::int64_t unix_seconds, std::string_view payload) {
  // "t=<seconds>,v1=<hex>", appended by hand: the gateway signs every request
  // it sends, and fmt's formatting engine cost more than these appends.
  const std::string hex = hmac_sha256_hex(secret, signed_text(unix_seconds, payload));
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, unix_seconds).ptr;
  std::string out;
  out.reserve(2 + static_cast<std::size_t>(end - digits) + 4 + hex.size());
  out.append("t=").append(digits, end).append(",v1=").append(hex);
  return out;
}

Status verify(std::string_view secret, std::string_view header, std::string_view payload, Micros now,
              Micros tolerance) {
  std::int64_t t = -1;
  std::string_view v1;
  for (std::size_t start = 0; start < header.size();) {
    const std::size_t end = std::min(header.find(',', start), header.size());
    const std::string_view part = header.substr(start, end - start);
    if (part.starts_with("t=")) std::from_chars(part.data() + 2, part.data() + part.size(), t);
    if (part.starts_with("v1=")) v1 = part.substr(3);
    start = end + 1;
  }
  if (t < 0 || v1.empty()) return Status::error("signature header malformed: want t=<seconds>,v1=<hex>");
  const std::string expected = hmac_sha256_hex(secret, signed_text(t, payload));
  if (expected.size() != v1.size() || CRYPTO_memcmp(expected.data(), v1.data(), v1.size()) != 0)
    return Status::error("signature does not match the payload");
  const Micros age = (kEpochSeconds + now / kSecond - t) * kSecond;
  if (tolerance > 0 && (age > tolerance || age < -tolerance))
    return Status::error(fmt::format("signature timestamp is {} old; tolerance is {}", format_duration(age < 0 ? -age : age),
                                     format_duration(tolerance)));
  return Status::OK();
}

}  // namespace twice::gateway
