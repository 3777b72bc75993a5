// The HTML report of a transformer plan (`plan --report`, `simulate --report`): the analytic
// figures, a simulated iteration, memory per device and the frontier of the same search.
#pragma once

#include <string>

#include "cost/analytic.h"
#include "search/llm.h"

namespace paraplan::cli {

/// `frontier_settings`: the search whose frontier the report plots (devices, batch, sequence,
/// fixed knobs).
std::string transformer_report(const AnalyticCostModel& cost, const TrainingConfig& config,
                               const std::string& cluster_label,
                               const LlmSearchSettings& frontier_settings);

}  // namespace paraplan::cli
