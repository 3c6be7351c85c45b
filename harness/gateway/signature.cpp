#include "gateway/signature.h"

#include <charconv>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace twice::gateway {

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), digest, &len);
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string sign(std::string_view secret, std::int64_t unix_seconds, std::string_view payload) {
  return fmt::format("t={},v1={}", unix_seconds, hmac_sha256_hex(secret, fmt::format("{}.{}", unix_seconds, payload)));
}

Status verify(std::string_view secret, std::string_view header, std::string_view payload, Micros now) {
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
  const std::string expected = hmac_sha256_hex(secret, fmt::format("{}.{}", t, payload));
  if (expected.size() != v1.size() || CRYPTO_memcmp(expected.data(), v1.data(), v1.size()) != 0)
    return Status::error("signature does not match the payload");
  const Micros age = (kEpochSeconds + now / kSecond - t) * kSecond;
  if (age > kSignatureTolerance || age < -kSignatureTolerance)
    return Status::error(fmt::format("signature timestamp is {} old; tolerance is {}", format_duration(age < 0 ? -age : age),
                                     format_duration(kSignatureTolerance)));
  return Status::OK();
}

}  // namespace twice::gateway
