// The fixed version: every bundled scenario with 200 seeds each, the same
// check as a RapidCheck property, whose runs RC_PARAMS controls
// (RC_PARAMS="seed=7 max_success=500" build/wallet_topup_test), the
// wallet's own scenarios in tests/scenarios/, and the bundled scenarios again
// on PostgreSQL, which the wallet runs on in production.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>  // after gtest.h, which it needs
#include <twice/gtest.h>
#include <twice/rapidcheck.h>

#include "wallet_options.h"

TEST(WalletTopup, CreditsEachPaymentExactlyOnce) {
  TWICE_EXPECT_EXACTLY_ONCE("wallet-topup", wallet_options());
}

RC_GTEST_PROP(WalletTopup, AnyRunCreditsExactlyOnce, ()) {
  twice::testing::rc_assert_exactly_once("wallet-topup", *twice::testing::gen_run(wallet_options()), wallet_options());
}

TEST(WalletTopup, OurOwnScenarios) {
  twice::testing::Options options;
  options.bundled = false;
  options.scenarios = {WALLET_SCENARIOS};  // a folder: every .toml in it
  options.plugin = "build/libwallet_topup.so";
  TWICE_EXPECT_EXACTLY_ONCE("wallet-topup", options);
}

// On PostgreSQL at its default level, read committed, where a check-then-act
// inside one transaction double-credits: the compare-and-swap must hold
// there too. twice starts a throwaway server for this test process (initdb
// and postgres from the postgresql package) and stops it at exit.
TEST(WalletTopup, CreditsEachPaymentExactlyOnceOnPostgres) {
  twice::testing::Options options = wallet_options();
  options.engine = "postgres";
  options.isolation = "read-committed";
  options.seeds = 50;  // a server run costs a few milliseconds more than SQLite's
  TWICE_EXPECT_EXACTLY_ONCE("wallet-topup", options);
}
