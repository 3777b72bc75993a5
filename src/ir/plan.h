// The plan vocabulary: what a planner decides and what a cost model predicts for it.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/error.h"
#include "ir/training.h"

namespace paraplan {

/// One pipeline stage: a contiguous set of layers run by d replicas of t devices each.
struct Stage {
  std::vector<int> layers;        ///< layer indices, ascending
  std::vector<int> option_index;  ///< per layer (same order): index into options_for(t)
  int data_parallel = 1;          ///< d
  int tensor_parallel = 1;        ///< t
  std::vector<int> device_ids;    ///< explicit placement when the cost model needs one
  int inflight_microbatches = 1;  ///< y: micro-batches whose activations are held at once
  /// The device group it runs on, when a cluster has several kinds of device (index into the
  /// cost model's groups; 0 otherwise).
  int device_type = 0;
  // Predicted figures (cost-model units; see docs/cost-models.md).
  double time = 0;  ///< the stage's cost (Piper: time per sample)
  double compute_time = 0;
  double communication_time = 0;  ///< activation transfers on cut edges
  double allreduce_time = 0;      ///< data-parallel gradient all-reduce share
  double optimizer_time = 0;      ///< the optimizer step's share (same units)
  double memory_bytes = 0;        ///< per device

  int devices() const { return data_parallel * tensor_parallel; }
};

/// Intra-operator plans: how one layer's iteration space is cut (one count per dimension) and
/// what it costs (cost-model units; PaSE: FLOP-equivalents per device).
struct LayerSplit {
  int layer = 0;           ///< layer index
  std::vector<int> split;  ///< parts per iteration dimension, in the operator's dim order
  int devices = 1;         ///< product of `split`
  double compute = 0;
  double communication = 0;   ///< collectives inside the layer
  double redistribution = 0;  ///< re-laying out its inputs from their producers
};

/// Memory per device, by what holds it (bytes).
struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;        ///< logits and recomputation working space
  double fragmentation_bytes = 0;  ///< the allocator's waste on the transient part above
  double reserved_bytes = 0;       ///< CUDA context, workspaces, NCCL buffers
  double peak_bytes = 0;           ///< all of the above: what the device must hold
};

/// The transformer planner's detail (`Plan::training`): every knob the plan trains with, and the
/// analytic model's breakdown of its iteration.
struct TrainingPlan {
  TrainingConfig config;
  MemoryBreakdown memory;  ///< the stage with the highest peak
  double tokens_per_s = 0;
  double tflops_per_device = 0;  ///< model FLOPs per device, in TFLOP/s (10^12 FLOP/s)
  double mfu = 0;                ///< model FLOPs utilisation, 0..1
  // The iteration (seconds): pipeline incl. its bubble, the exposed data-parallel gradient
  // synchronisation, the optimizer step.
  double pipeline_s = 0, bubble_s = 0, dp_allreduce_s = 0, optimizer_s = 0;
};

/// Where a pipeline plan's stages run (their device_ids) and what that placement costs on the
/// cluster's links (cost/placement.h: the slowest stage per micro-batch, seconds).
struct PlacementFigures {
  std::string cluster;           ///< the cluster (preset or file name) it was placed on
  double cost_s = 0;             ///< the chosen placement
  double rank_order_cost_s = 0;  ///< stages on consecutive devices
  double lower_bound_s = 0;      ///< = cost_s when exact
  bool exact = false;            ///< no placement is better (branch and bound finished)
};

/// Which planner made a plan under which cost model: a closed kind (branch on it, never on
/// strings). Its detail (Plan::detail) is the planner's own.
enum class PlanKind {
  kPipeline,     ///< the pipeline planner under Piper's cost model: PipelineDetail
  kDapple,       ///< the pipeline planner under DAPPLE's cost model: DappleDetail
  kIntraOp,      ///< the intra-operator planner under PaSE's cost model: IntraOpDetail
  kTransformer,  ///< the transformer planner under the analytic model: TrainingPlan
  /// The transformer planner on devices of several types (segments of one type each, in
  /// pipeline order) under the mixed analytic model: MixedTrainingPlan
  kMixedTransformer,
};

/// The planner's name as plan files and documents give it: "pipeline", "intra-op", "llm" or
/// "llm-mixed".
const char* planner_name(PlanKind kind);
/// The cost model's name: "piper", "dapple", "pase" or "analytic".
const char* cost_model_name(PlanKind kind);

/// The pipeline planner's detail under Piper's cost model.
struct PipelineDetail {
  /// Placed on a cluster's network: the placement's figures.
  std::optional<PlacementFigures> placement;
};

/// DAPPLE's detail.
struct DappleDetail {
  double speedup = 0;         ///< one device on the whole batch / plan time
  int pipeline_replicas = 1;  ///< identical copies of the pipeline
};

/// The intra-operator planner's detail.
struct IntraOpDetail {
  std::vector<LayerSplit> layer_splits;  ///< one per layer
  double step_time_s = 0;                ///< estimated seconds per training step
};

/// The mixed transformer planner's detail: its configuration and the mixed analytic model's
/// breakdown of its iteration (the stages' own figures are Plan::stages: each stage's device
/// type, widths, devices, time per micro-batch, synchronisation, optimizer step and peak memory).
struct MixedTrainingPlan {
  MixedConfig config;                         ///< stage_layers: the split priced
  MemoryBreakdown memory;                     ///< the stage with the highest peak
  std::vector<MemoryBreakdown> stage_memory;  ///< per stage, per device
  double tokens_per_s = 0;
  double tflops_per_device = 0;
  double mfu = 0;  ///< of the devices' summed peak FLOP/s
  double pipeline_s = 0, bubble_s = 0, dp_allreduce_s = 0, optimizer_s = 0;
};

/// A complete parallelisation of one model on one cluster, whichever planner made it: the
/// common figures — stages with their layers, degrees, devices and predicted figures, the
/// schedule, the objective — and the planner's own detail, by kind.
struct Plan {
  PlanKind kind = PlanKind::kPipeline;
  bool feasible = false;
  double objective = 0;  ///< the cost model's own figure (lower is better)
  std::string schedule = "1F1B";
  int microbatches = 1;  ///< per pipeline replica per iteration
  int devices_used = 0;
  /// Transformer plans: the transformer blocks (layers 0 .. L − 1) each pipeline stage runs,
  /// with tensor_parallel tp and data_parallel dp (the stage spans tp × cp × dp devices) and, as
  /// inflight_microbatches, the micro-batches (interleaved: chunks) it holds at once.
  std::vector<Stage> stages;
  std::variant<PipelineDetail, DappleDetail, IntraOpDetail, TrainingPlan, MixedTrainingPlan> detail;

  /// A plan of `kind` with its empty detail.
  static Plan of(PlanKind kind);
  const char* planner() const { return planner_name(kind); }
  const char* cost_model() const { return cost_model_name(kind); }
  /// The detail as its type; Error(kInternal) when the plan is of another kind (a checked cast).
  template <typename Detail>
  const Detail& as() const {
    if (const Detail* d = std::get_if<Detail>(&detail)) return *d;
    throw Error(ErrorKind::kInternal, "plan",
                std::string("a ") + cost_model_name(kind) + " plan read as another kind");
  }
  template <typename Detail>
  Detail& as() {
    return const_cast<Detail&>(static_cast<const Plan*>(this)->as<Detail>());
  }
  /// The detail if the plan is of that kind, else nullptr.
  template <typename Detail>
  const Detail* get_if() const {
    return std::get_if<Detail>(&detail);
  }
};

}  // namespace paraplan
