// The transformer planner over devices of several types: which device type runs which pipeline
// stages, each type's tensor- and data-parallel widths and stage count, the pipeline micro-batch,
// recomputation, sequence parallelism, ZeRO stage and gradient-reduce overlap, and the uneven
// layer split, priced by the mixed analytic model (cost/analytic_mixed.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/analytic_mixed.h"
#include "ir/plan.h"

namespace paraplan {

struct MixedSearchSettings {
  std::int64_t global_batch = 512;
  std::int64_t seq_len = 2048;
  Attention attention = Attention::kFlash;
  int max_zero_stage = 1;  ///< Megatron-LM's distributed optimizer is ZeRO 1
  /// Sequences a replica works on per micro-batch, at most.
  std::int64_t max_replica_microbatch = 16;
  int top_k = 5;
};

struct MixedCandidate {
  MixedConfig config;
  MixedResult result;
};

struct MixedSearchResult {
  std::vector<MixedCandidate> top;  ///< fastest first; only configurations that fit
  std::int64_t evaluated = 0;       ///< configurations priced (with their split)
  std::int64_t pruned = 0;          ///< skipped: a lower bound above the k-th best
  std::int64_t rejected_memory = 0;
  double seconds = 0;
};

/// The candidate as the common plan (PlanKind::kMixedTransformer): its stages with their device
/// type, layers, widths, devices, in-flight micro-batches (1F1B: p − i) and figures (time per
/// micro-batch, synchronisation and optimizer step in seconds, peak memory in bytes).
Plan mixed_plan(const MixedCandidate& candidate);

/// The exact min-max layer split of `config` (its stage_layers ignored): the split whose slowest
/// stage (time per micro-batch) is fastest among those whose every stage fits its device type's
/// memory; nullopt when none fits.
std::optional<std::vector<int>> balance_mixed_stages(const MixedAnalyticModel& model,
                                                     const MixedConfig& config);

/// Every device type of the job gets one segment (in every order of the types), using all of its
/// devices; each configuration is priced with its balanced split. Deterministic: ties in time go
/// to the smaller peak memory, then the enumeration order (types' order, then per segment tp,
/// pp, then the micro-batch, recomputation, sequence parallelism, ZeRO, overlap).
MixedSearchResult search_llm_mixed(const MixedAnalyticModel& model,
                                   const MixedSearchSettings& settings);

}  // namespace paraplan
