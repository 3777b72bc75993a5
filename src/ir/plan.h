// The plan vocabulary: what a planner decides and what a cost model predicts for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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

/// What the analytic models predict for a transformer plan, on one device type or several: its
/// memory, throughput and the breakdown of its iteration.
struct TrainingFigures {
  MemoryBreakdown memory;  ///< the stage with the highest peak
  double tokens_per_s = 0;
  double tflops_per_device = 0;  ///< model FLOPs per device, in TFLOP/s (10^12 FLOP/s)
  double mfu = 0;  ///< model FLOPs utilisation, 0..1 (mixed: of the devices' summed peaks)
  // The iteration (seconds): pipeline incl. its bubble, the exposed data-parallel gradient
  // synchronisation, the optimizer step.
  double pipeline_s = 0, bubble_s = 0, dp_allreduce_s = 0, optimizer_s = 0;
};

/// The transformer planner's detail: every knob the plan trains with, and the analytic model's
/// figures.
struct TrainingPlan : TrainingFigures {
  TrainingConfig config;
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

/// How a plan orders its passes: one closed kind for the planners, the simulator, plan files,
/// JSON and Python, spelled as schedule_name gives it.
enum class Schedule {
  kGpipe,        ///< "gpipe": every forward pass first, then every backward pass
  kOneFOneB,     ///< "1f1b": one forward, one backward (DAPPLE's early backward too)
  kInterleaved,  ///< "interleaved-1f1b": Megatron-LM's interleaved 1F1B over virtual stages
  /// "zero-bubble": ZB-H1 (Qi et al., 2023): each backward split into the input gradient (sent
  /// on at once) and the weight gradient, stage i deferring up to i weight-gradient passes to
  /// fill the drain; the first stage's peak memory stays that of 1F1B.
  kZeroBubble,
  kLayerByLayer,  ///< "layer-by-layer": an intra-operator plan's layers one after the other
};

/// "gpipe", "1f1b", "interleaved-1f1b", "zero-bubble" or "layer-by-layer".
const char* schedule_name(Schedule schedule);
/// Every spelling, as messages list them: "gpipe, 1f1b, interleaved-1f1b, zero-bubble,
/// layer-by-layer".
std::string schedule_names();
/// The schedule a name spells (the names above; plan files written before the schedule was a
/// closed kind also spelled "1F1B", "interleaved 1F1B", "DAPPLE (early backward, synchronous)"
/// and "none"), or nullopt.
std::optional<Schedule> schedule_from_name(std::string_view name);
/// The same for a request's field: FieldError("schedule") listing the valid names.
Schedule parse_schedule(const std::string& name);

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

/// Every kind, in order (for tests and readers that try each).
inline constexpr PlanKind kPlanKinds[] = {PlanKind::kPipeline, PlanKind::kDapple,
                                          PlanKind::kIntraOp, PlanKind::kTransformer,
                                          PlanKind::kMixedTransformer};

/// The planner's name as plan files and documents give it: "pipeline", "intra-op", "llm" or
/// "llm-mixed".
const char* planner_name(PlanKind kind);
/// The cost model's name: "piper", "dapple", "pase" or "analytic".
const char* cost_model_name(PlanKind kind);
/// Whether plans of `kind` run under `schedule`: Piper's under 1f1b or gpipe, DAPPLE's and
/// mixed transformer plans under 1f1b, intra-operator plans layer by layer, transformer plans
/// under any pipeline schedule.
bool schedule_fits(PlanKind kind, Schedule schedule);
/// The schedules plans of `kind` run under, as messages list them: "1f1b or gpipe".
std::string schedules_of(PlanKind kind);
/// The kind a planner and cost model name together, or nullopt for a pair no planner writes.
std::optional<PlanKind> plan_kind(std::string_view planner, std::string_view cost_model);

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
struct MixedTrainingPlan : TrainingFigures {
  MixedConfig config;                         ///< stage_layers: the split priced
  std::vector<MemoryBreakdown> stage_memory;  ///< per stage, per device
};

/// A complete parallelisation of one model on one cluster, whichever planner made it: the
/// common figures — stages with their layers, degrees, devices and predicted figures, the
/// schedule, the objective — and the planner's own detail, by kind.
struct Plan {
  bool feasible = false;
  double objective = 0;  ///< the cost model's own figure (lower is better)
  Schedule schedule = Schedule::kOneFOneB;
  int microbatches = 1;  ///< per pipeline replica per iteration
  int devices_used = 0;
  /// Transformer plans: the transformer blocks (layers 0 .. L − 1) each pipeline stage runs,
  /// with tensor_parallel tp and data_parallel dp (the stage spans tp × cp × dp devices) and, as
  /// inflight_microbatches, the micro-batches (interleaved: chunks) it holds at once.
  std::vector<Stage> stages;
  /// The planner's detail; its alternative is the plan's kind (PlanKind's order), so the kind is
  /// never stored beside it.
  std::variant<PipelineDetail, DappleDetail, IntraOpDetail, TrainingPlan, MixedTrainingPlan> detail;

  /// A plan of `kind` with its empty detail.
  static Plan of(PlanKind kind);
  PlanKind kind() const { return static_cast<PlanKind>(detail.index()); }
  const char* planner() const { return planner_name(kind()); }
  const char* cost_model() const { return cost_model_name(kind()); }
  /// The detail as its type; Error(kInternal) when the plan is of another kind (a checked cast).
  template <typename Detail>
  const Detail& as() const {
    if (const Detail* d = std::get_if<Detail>(&detail)) return *d;
    throw Error(ErrorKind::kInternal, "plan",
                std::string("a ") + cost_model_name(kind()) + " plan read as another kind");
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

/// Where one rank of a plan runs: its stage, its replica of the stage, its tensor-parallel index
/// within the replica, and the cluster device it is.
struct RankPlace {
  int stage = 0, replica = 0, tensor_index = 0, device = 0;
};

/// The plan's rank layout, in rank order — written once, for the simulator's placement and the
/// runtime (which takes it from the core): stage by stage, each stage's replicas in order with
/// their tensor-parallel indices inside, on devices 0, 1, 2, ... unless a stage names its devices
/// (device_ids, replica-major); then rank i runs what the i-th smallest named device runs.
/// Error(kInput, place) when a stage names a device count other than d × t, or a device twice.
std::vector<RankPlace> rank_layout(const Plan& plan, const std::string& place);

}  // namespace paraplan
