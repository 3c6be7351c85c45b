// The wallet's tables, as twice seeds them and reads them back: payments the
// shop waits for, one wallet per user, one wallet_credits row per credit, and
// refunds owed for payments that must not be credited.
#pragma once

#include <twice/schema.h>

const twice::Schema& wallet_schema();
