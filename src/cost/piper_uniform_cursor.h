// The Piper cost model's fast stage cursor (cost/piper_uniform_cursor.cc): for models whose
// layers have at most two options per degree that share parameter bytes and optimizer time.
#pragma once

#include <memory>

#include "cost/piper_cost.h"

namespace paraplan {

/// True when the fast cursor prices `m` (its objective is time per sample and every layer's
/// options per degree are at most two, with equal parameter bytes and optimizer time).
bool piper_uniform_applies(const PiperCostModel& m);

std::unique_ptr<StageCursor> make_piper_uniform_cursor(const PiperCostModel& m);

}  // namespace paraplan
