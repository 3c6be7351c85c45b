// The reference schema every bundled handler works on, and the oracle queries
// the checker reads it with.
#pragma once

#include <string>

namespace twice::env {

// orders, accounts, ledger (one row per credit), callback_log (UNIQUE out_trade_no).
const std::string& reference_schema();

}  // namespace twice::env
