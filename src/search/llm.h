// The transformer planner: every combination of tensor, context, pipeline, data and expert
// parallel sizes, micro-batch, interleaving, activation recomputation (none, selective, full, a
// number of layers), sequence parallelism, ZeRO stage and gradient-reduce overlap that fits in
// memory, priced by the analytic cost model, each with its best layer split across stages;
// knobs the user fixes are not searched.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/analytic.h"
#include "ir/engine_rules.h"
#include "ir/progress.h"
#include "ir/training_rules.h"

namespace paraplan {

struct LlmSearchSettings {
  int devices = 8;
  std::int64_t global_batch = 512;
  std::int64_t seq_len = 2048;
  // Fixed knobs (unset: searched).
  std::optional<int> tp, cp, pp, dp, ep, vpp;
  std::optional<int> etp;  ///< expert tensor parallel (as given; else tp)
  std::optional<std::int64_t> micro_batch;
  std::optional<Recompute> recompute;
  std::optional<int> recompute_layers;  ///< with recompute = kFull; 0 = every layer
  std::optional<bool> sequence_parallel;
  std::optional<int> zero_stage;
  std::optional<int> shard_group;  ///< HSDP (ZeRO 3 only): as given; else full sharding
  std::optional<bool> overlap_grad_reduce;
  Attention attention = Attention::kFlash;  ///< a property of the software, not searched
  double moe_capacity_factor = 0;           ///< MoE token dropping (0: dropless); not searched
  Stack stack = Stack::kMegatron;           ///< the training engine; not searched
  bool fp8 = false;  ///< FP8 linear layers (the numerics are the user's choice); not searched
  /// Its overlaps and precisions fixed by the user; the rest take the stack's defaults, which
  /// cost no more than turning them off (apply_stack_defaults).
  StackChoices stack_choices;
  /// Only plans this engine runs (ir/engine_rules.h): every candidate passes its rules, and the
  /// loops below skip what they refuse. Set from the engine's rules by api::search_within.
  std::optional<Engine> engine;
  /// Searched stages stop here (Megatron-LM's distributed optimizer: 1).
  int max_zero_stage = 3;
  /// Only the engine's own layer split (DeepSpeed's pipeline engine: ir/engine_rules.h's
  /// deepspeed_split), never a balanced one.
  bool even_stages_only = false;
  /// False: ZeRO 1 is not tried (torchtitan shards with FSDP, ZeRO 2 or 3, or not at all).
  bool zero_stage_1 = true;
  /// Also try non-uniform layer splits (1F1B, whole-layer recomputation, m ≥ pp).
  bool balance_stages = true;
  int top_k = 5;
  double time_limit_s = 0;           ///< 0: none; else stop and return the best found so far
  ProgressSink* progress = nullptr;  ///< told how many (tp, cp, pp) shapes are done; may be null
  /// Also collect every non-dominated (time, peak memory, devices) configuration; the layer
  /// split is then searched for every configuration (no pruning).
  bool frontier = false;
  /// The launch's own recipe sets the precision (a Megatron-Bridge recipe's MixedPrecisionConfig,
  /// which reduces gradients in bf16): the engine's precision rule, about the launches paraplan
  /// writes from the vanilla recipe, does not bind the plans searched for it.
  bool recipe_sets_precision = false;
};

/// The rules of the settings' engine as they bind its search (EngineRules, relaxed where the
/// launch's recipe sets what paraplan's own launch could not).
EngineRules search_engine_rules(const LlmSearchSettings& settings);

/// Restricts a search to what `engine` runs (ir/engine_rules.h: its stack, ZeRO stages, context
/// parallelism, interleaving, even stages, whole-layer recomputation); RuleViolation for a knob
/// fixed in `settings` that the engine refuses, or a stack that is not the engine's. search_llm
/// keeps to the settings' engine, or to the stack's (stack_engine) when none is set.
void search_within(LlmSearchSettings& settings, Engine engine);

struct LlmCandidate {
  TrainingConfig config;
  AnalyticResult result;
};

/// The candidate as a Plan (planner "llm", cost model "analytic"): its pipeline stages with their
/// blocks, degrees, time per micro-batch and memory, the schedule, and the knobs and breakdown
/// in `Plan::training`.
Plan llm_plan(const LlmCandidate& candidate);

/// The figures a priced pipeline gives its plan: an AnalyticResult or a MixedResult (the same
/// names), with the memory of its busiest stage.
template <typename Priced>
TrainingFigures training_figures(const Priced& r, const MemoryBreakdown& busiest_stage) {
  TrainingFigures f;
  f.memory = busiest_stage;
  f.tokens_per_s = r.tokens_per_s;
  f.tflops_per_device = r.tflops_per_device;
  f.mfu = r.mfu;
  f.pipeline_s = r.pipeline_s;
  f.bubble_s = r.bubble_s;
  f.dp_allreduce_s = r.dp_allreduce_s;
  f.optimizer_s = r.optimizer_s;
  return f;
}

struct LlmSearchResult {
  std::vector<LlmCandidate> top;       ///< fastest first; only configurations that fit
  std::vector<LlmCandidate> frontier;  ///< with settings.frontier: non-dominated, fastest first
  std::int64_t evaluated = 0;          ///< configurations priced
  std::int64_t rejected_memory = 0;
  std::int64_t balanced = 0;  ///< configurations whose stage split was searched
  bool timed_out = false;
  double seconds = 0;
  /// Of the configurations that do not fit, the one that needs the least memory per device.
  std::optional<LlmCandidate> leanest;
};

/// Deterministic: ties in time go to the smaller peak memory, then the smaller (tp, cp, pp, ep,
/// micro-batch, vpp, recompute, recomputed layers, sequence parallel, ZeRO, overlap, stage
/// layers) in that order. Error(kUsage) for a fixed knob that breaks a rule.
LlmSearchResult search_llm(const AnalyticCostModel& cost, const LlmSearchSettings& settings);
/// The order search_llm breaks ties with (time, memory, then the knobs).
bool llm_candidate_before(const LlmCandidate& a, const LlmCandidate& b);

/// Exact: the split into exactly `config.pp` stages whose slowest stage (time per micro-batch,
/// 1F1B) is fastest among the splits that fit in memory; nullopt when none fits. Ties:
/// deterministic (the first stage's end found by the search below). A dynamic programme over
/// (stages left, first layer) with a binary search for the stage end (stage time grows and the
/// rest's optimum falls with it): O(pp · layers · log layers) stage prices.
std::optional<std::vector<int>> balance_stages(const AnalyticCostModel& cost,
                                               const TrainingConfig& config);

}  // namespace paraplan
