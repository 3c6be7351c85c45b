// The explorer's view of the result model (results/model.h): the explorer
// fills these in; the report writers read them through the model alone.
#pragma once

#include "results/model.h"

namespace twice::explore {

using results::CellFailure;
using results::CellResult;
using results::EffectRecord;
using results::ExhaustiveVerdict;
using results::Counterexample;
using results::MatrixResult;
using results::TranscriptRow;
using results::ViolationResult;

}  // namespace twice::explore
