#include "gateway/signature.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <openssl/evp.h>

namespace twice::gateway {
namespace {

TEST(Signature, HmacSha256MatchesAKnownVector) {
  // RFC 4231 test case 2.
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

// OpenSSL's one-shot HMAC, with no cache: what every answer must equal.
std::string reference_hex(const std::string& key, const std::string& message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  std::size_t len = 0;
  EXPECT_NE(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                      reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, sizeof digest,
                      &len),
            nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (std::size_t i = 0; i < len; ++i) hex.append({kHex[digest[i] >> 4], kHex[digest[i] & 0xf]});
  return hex;
}

// hmac_sha256_hex keeps the digests it made by message: over more messages
// than it keeps (4,096), under two keys for each (a hit must be of the same
// key too), asked in an order that both hits and refills, every answer is
// the HMAC's.
TEST(Signature, KeptDigestsAreTheHmacsForEveryKeyAndMessage) {
  std::vector<std::string> messages;
  for (int i = 0; i < 4500; ++i) messages.push_back(std::to_string(1700000000 + i % 7) + ".{\"total\":" + std::to_string(i) + "}");
  const std::string keys[] = {"whsec_twice_wechat", "whsec_twice_alipay"};
  std::mt19937_64 rng(20261201);
  std::uniform_int_distribution<std::size_t> pick(0, messages.size() - 1);
  for (int i = 0; i < 20000; ++i) {
    const std::string& m = messages[pick(rng)];
    const std::string& k = keys[rng() % 2];
    ASSERT_EQ(hmac_sha256_hex(k, m), reference_hex(k, m)) << k << " " << m;
  }
}

TEST(Signature, AValidSignatureVerifiesWithinTheTolerance) {
  const std::string header = sign("secret", kEpochSeconds + 100, R"({"a":1})");
  EXPECT_TRUE(verify("secret", header, R"({"a":1})", 100 * kSecond).ok());
  EXPECT_TRUE(verify("secret", header, R"({"a":1})", 100 * kSecond + 4 * kMinute).ok());
}

TEST(Signature, ForgedTamperedStaleAndMalformedAreRefusedWithAReason) {
  const std::string header = sign("secret", kEpochSeconds + 100, R"({"amount":100})");
  EXPECT_EQ(verify("other-key", header, R"({"amount":100})", 100 * kSecond).message(),
            "signature does not match the payload");
  EXPECT_EQ(verify("secret", header, R"({"amount":1})", 100 * kSecond).message(),
            "signature does not match the payload");
  EXPECT_EQ(verify("secret", header, R"({"amount":100})", 100 * kSecond + kHour).message(),
            "signature timestamp is 1h old; tolerance is 5m");
  EXPECT_NE(verify("secret", "v1=abc", "{}", 0).message().find("malformed"), std::string::npos);
}

}  // namespace
}  // namespace twice::gateway
