// The first version against every bundled scenario, 200 seeds each. It fails:
// the message is a shrunk interleaving that double-credits, its seed and
// the command that replays it.
#include <twice/gtest.h>

#include "wallet_options.h"

TEST(WalletTopupV1, CreditsEachPaymentExactlyOnce) {
  TWICE_EXPECT_EXACTLY_ONCE("wallet-topup-v1", wallet_options());
}
