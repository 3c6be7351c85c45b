#include "gateway/signature.h"

#include <gtest/gtest.h>

namespace twice::gateway {
namespace {

TEST(Signature, HmacSha256MatchesAKnownVector) {
  // RFC 4231 test case 2.
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
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
