// GoogleTest assertions over twice/testing.h: one line in a TEST runs every
// bundled scenario against a handler, many seeds each, and fails with the
// shrunk counterexample, its seed and the replay command.
//
//   TEST(MyHandler, CreditsExactlyOnce) { TWICE_EXPECT_EXACTLY_ONCE("my-handler"); }
//
//   twice::testing::Options options;
//   options.seeds = 1000;
//   options.scenarios = {"tests/scenarios/refund-race.toml"};
//   TWICE_ASSERT_EXACTLY_ONCE("my-handler", options);
//
// The first argument is a registered handler's name or a twice::HandlerInfo.
// EXPECT_ records the failure and goes on; ASSERT_ also returns from the test.
// Link twice::gtest. Same threading promises as twice/testing.h.
#pragma once

#include <gtest/gtest.h>

#include "twice/testing.h"

#define TWICE_EXPECT_EXACTLY_ONCE(handler, ...)                                                             \
  do {                                                                                                      \
    const ::twice::testing::Report twice_report_ =                                                          \
        ::twice::testing::check_exactly_once(handler __VA_OPT__(, ) __VA_ARGS__);                           \
    if (!twice_report_.passed) ADD_FAILURE() << twice_report_.message;                                      \
  } while (0)

#define TWICE_ASSERT_EXACTLY_ONCE(handler, ...)                                                             \
  do {                                                                                                      \
    const ::twice::testing::Report twice_report_ =                                                          \
        ::twice::testing::check_exactly_once(handler __VA_OPT__(, ) __VA_ARGS__);                           \
    if (!twice_report_.passed) GTEST_FAIL() << twice_report_.message;                                       \
  } while (0)
