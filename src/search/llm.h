// The transformer planner: every combination of tensor, pipeline and data parallel sizes,
// micro-batch, activation recomputation, sequence parallelism and distributed optimizer that
// fits in memory, priced by the analytic cost model; knobs the user fixes are not searched.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/analytic.h"

namespace paraplan {

struct LlmSearchSettings {
  int devices = 8;
  std::int64_t global_batch = 512;
  std::int64_t seq_len = 2048;
  // Fixed knobs (unset: searched).
  std::optional<int> tp, pp, dp;
  std::optional<std::int64_t> micro_batch;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  std::optional<int> zero_stage;  ///< searched over {0, 1} (ZeRO 2/3 traffic is not priced)
  int top_k = 5;
  double time_limit_s = 0;        ///< 0: none; else stop and return the best found so far
};

struct LlmCandidate {
  TrainingConfig config;
  AnalyticResult result;
};

struct LlmSearchResult {
  std::vector<LlmCandidate> top;  ///< fastest first; only configurations that fit
  std::int64_t evaluated = 0;     ///< configurations priced
  std::int64_t rejected_memory = 0;
  bool timed_out = false;
  double seconds = 0;
};

/// Deterministic: ties in time go to the smaller peak memory, then the smaller (tp, pp,
/// micro-batch, recompute, sequence parallel, ZeRO) in that order. Error(kUsage) for a fixed knob that breaks a rule.
LlmSearchResult search_llm(const AnalyticCostModel& cost, const LlmSearchSettings& settings);

}  // namespace paraplan
