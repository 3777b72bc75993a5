// The transformer planner's frontier across device counts: every non-dominated plan over
// (iteration time, peak memory per device, devices used), from `devices` halving down to 1.
#pragma once

#include <cstdint>
#include <vector>

#include "search/llm.h"

namespace paraplan {

struct LlmFrontierResult {
  std::vector<LlmCandidate> points;  ///< non-dominated, fastest first
  std::int64_t evaluated = 0;
  double seconds = 0;
};

/// The frontier over device counts settings.devices, /2, ... (while the knobs allow them).
LlmFrontierResult llm_frontier(const AnalyticCostModel& cost, const LlmSearchSettings& settings);

}  // namespace paraplan
