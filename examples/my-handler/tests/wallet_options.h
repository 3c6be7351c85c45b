// What the wallet's tests hold its handlers to: every bundled scenario but
// those where a payment can only be found by a background job, not by the
// callback handler.
#pragma once

#include <twice/testing.h>

inline twice::testing::Options wallet_options() {
  twice::testing::Options options;
  options.skip = {
      "lost-notifications",  // every callback is lost: only a reconciler finds the payment
      "adyen-head-of-line",  // all 5 attempts may be lost (1 run in 32): the same
      "close-race",          // needs an order-closer job: our orders never expire
  };
  // So that the replay commands in a failure work as printed, from this folder.
  options.plugin = "build/libwallet_topup.so";
  return options;
}
