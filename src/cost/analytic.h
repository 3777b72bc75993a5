// The analytical cost model of transformer training: per-GEMM rooflines, memory-bound attention
// terms, tensor/context/expert-parallel collectives priced on the link tier they cross, pipeline
// stages (any layer split, 1F1B or interleaved), the data-parallel gradient reduction with ZeRO
// 0-3 and optional overlap, the optimizer step; memory per device and per stage after Korthikanti
// et al. (2022). Every efficiency comes from a Calibration (docs/cost-models.md gives each
// formula).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/calibration.h"
#include "ir/cluster.h"
#include "ir/plan.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan {

/// Shipped calibrations (data/calibration/*.json hold the same values): "A100" (fitted on
/// data/vtrain), "H100" and "H200" (the A100 efficiencies with their own memory
/// bandwidth until measurements exist). Error(kUsage) for another device.
Calibration default_calibration(const std::string& device);

/// One pipeline stage (one device of it) as the model sees it.
struct StageFigures {
  int layers = 0;
  double time_per_microbatch_s = 0;  ///< forward + backward of one micro-batch incl. sends
  MemoryBreakdown memory;
};

/// What one micro-batch costs one device, per building block of the layer stack.
struct BlockCosts {
  double layer_s = 0;        ///< one transformer layer, forward + backward + its collectives
  double layer_plain_s = 0;  ///< the same without recomputation (recompute_layers)
  // layer_s split into passes (the simulator's events): compute incl. framework overhead, and
  // the blocking collectives (tensor, context and expert parallel) of each pass.
  double layer_forward_s = 0, layer_forward_comm_s = 0;
  double layer_backward_s = 0, layer_backward_comm_s = 0;  ///< incl. any recomputation
  double layer_plain_backward_s = 0, layer_plain_backward_comm_s = 0;
  double embedding_s = 0, head_s = 0;  ///< forward + backward (one third forward)
  double p2p_send_s = 0;  ///< one blocking send of a micro-batch's activation (or gradient)
  double p2p_bytes = 0, p2p_bandwidth_bytes_per_s = 0;  ///< its bytes and effective bandwidth
  double p2p_s = 0;      ///< two sends: what a middle stage sends per micro-batch and chunk
  double tp_comm_s = 0;  ///< part of layer_s: tensor-parallel collectives
  double cp_comm_s = 0;  ///< part of layer_s: exposed context-parallel KV exchange
  double ep_comm_s = 0;  ///< part of layer_s: expert-parallel all-to-alls
  // Parameters held per device.
  double layer_dense_params = 0;   ///< replicated over dp × cp
  double layer_expert_params = 0;  ///< replicated over dp × cp / ep
  double embedding_params = 0, head_params = 0;
  // Activation bytes kept per micro-batch in flight.
  double layer_activation_bytes = 0;        ///< under the configured recomputation
  double layer_plain_activation_bytes = 0;  ///< without recomputation
  double recompute_working_bytes = 0;       ///< one layer's activations while recomputed
  double logits_bytes = 0;                  ///< last stage
};

/// One data-parallel collective of a stage's parameters, each priced alone (not overlapped).
struct SyncParts {
  double allreduce_s = 0;       ///< gradients (ZeRO 0/1)
  double reduce_scatter_s = 0;  ///< gradients (ZeRO 2/3, per micro-batch)
  double weight_gather_s = 0;   ///< 16-bit weights (ZeRO 2 once, ZeRO 3 per pass)
  /// HSDP: the shard's gradients all-reduced across the shard groups (ZeRO 3, per micro-batch)
  double replica_allreduce_s = 0;
};

struct AnalyticResult {
  double iteration_time_s = 0;
  // Breakdown (seconds of the iteration).
  double pipeline_s = 0;                ///< forward/backward of all micro-batches incl. bubble
  double compute_per_microbatch_s = 0;  ///< bottleneck stage, one micro-batch
  double tp_comm_per_microbatch_s = 0;
  double pp_comm_per_microbatch_s = 0;
  double bubble_s = 0;
  double dp_allreduce_s = 0;  ///< exposed data-parallel gradient (and ZeRO gather) time
  double optimizer_s = 0;
  double tokens_per_s = 0;
  double tflops_per_device = 0;  ///< model FLOPs (no recomputation) per device per second / 1e12
  double mfu = 0;
  MemoryBreakdown memory;  ///< of the stage with the highest peak
  std::vector<StageFigures> stages;
  std::vector<int> stage_layers;  ///< the split priced (the configured one or the default)
  bool fits = true;
};

class AnalyticCostModel {
 public:
  AnalyticCostModel(TransformerConfig model, Cluster cluster, Calibration calibration);

  /// RuleViolation (ir/training_rules) when the configuration breaks a rule for the model and
  /// cluster (heads not divisible by tp, batch not divisible, devices, ...); Error(kUsage) when
  /// the cluster or calibration lacks what the model needs.
  AnalyticResult evaluate(const TrainingConfig& config) const;
  /// Throws like evaluate; no pricing.
  void check(const TrainingConfig& config) const;
  /// Per-block costs of a checked configuration (the stage split is not used).
  BlockCosts block_costs(const TrainingConfig& config) const;
  /// A value no layer split of `config` (same knobs, any stage_layers) has an iteration time
  /// below; the planner prunes with it.
  double time_lower_bound(const TrainingConfig& config) const;
  /// Memory of stage `stage` holding `layers` layers (used by the stage split search).
  MemoryBreakdown stage_memory(const TrainingConfig& config, const BlockCosts& costs, int stage,
                               int layers) const;
  /// The same for a stage known by what it holds: `layers` layers, the embedding (`first`), the
  /// LM head (`last`), activations of `in_flight` micro-batches.
  MemoryBreakdown stage_memory(const TrainingConfig& config, const BlockCosts& costs, int layers,
                               bool first, bool last, double in_flight) const;

  const TransformerConfig& model() const { return model_; }
  const Cluster& cluster() const { return cluster_; }
  const Calibration& calibration() const { return cal_; }
  double device_memory_bytes() const;

  /// Data-parallel gradient synchronisation after the passes of a stage holding `dense_params`
  /// and `expert_params` per device; with overlap, up to `backward_window_s` of it is hidden.
  /// ZeRO 3 has none: its per-layer collectives are zero3_microbatch_s.
  double gradient_sync_s(const TrainingConfig& t, double dense_params, double expert_params,
                         double backward_window_s) const;
  /// ZeRO 3 (FSDP FULL_SHARD): the per-layer weight gathers and gradient reduce-scatters of one
  /// micro-batch of a stage of `layers` layers whose compute takes `work_s`, as far as the
  /// prefetch does not hide them behind the compute (hidden time costs overlap_slowdown).
  /// Forward + backward of one micro-batch on a stage of `layers` layers (with the embedding when
  /// `first`, the LM head when `last`) including its blocking pipeline sends.
  double stage_work_s(const TrainingConfig& t, const BlockCosts& costs, bool first, bool last,
                      int layers) const;
  /// The pipeline sends a stage pays per micro-batch beside `compute_s` of its own work:
  /// blocking, or with overlap_p2p_comm only what its chunks' compute cannot hide.
  double stage_sends_s(const TrainingConfig& t, const BlockCosts& costs, double compute_s) const;
  /// ZeRO 3: the weights and gradients a device holds unsharded during a pass (part of a
  /// stage's buffers); 0 for other stages.
  double zero3_gathered_bytes(const TrainingConfig& t, const BlockCosts& costs, bool first,
                              bool last) const;
  double zero3_microbatch_s(const TrainingConfig& t, const BlockCosts& costs, int layers,
                            double work_s) const;
  double optimizer_step_s(const TrainingConfig& t, double dense_params, double expert_params) const;
  SyncParts sync_parts(const TrainingConfig& t, double dense_params, double expert_params) const;
  /// A stage's parameters per device: replicated over dp × cp (dense) and dp × cp / ep (experts).
  std::pair<double, double> stage_parameters(const BlockCosts& costs, const TrainingConfig& t,
                                             int stage, int layers) const;

 private:
  /// A collective group whose members sit `stride` devices apart: its ring bandwidth (NVLink
  /// inside a node; across nodes the NICs of the members each node holds) and the nodes it spans.
  struct CollectiveGroup {
    double bandwidth;
    int nodes;
  };
  CollectiveGroup collective_group(int members, int stride) const;
  // block_costs in parts: the sizes, one layer's forward, its passes with their collectives
  // under a recomputation, and the parameters and activations a device holds.
  struct BlockShape;
  struct LayerForward;
  struct LayerPasses;
  BlockShape block_shape(const TrainingConfig& t) const;
  double gemm_s(const BlockShape& x, double rows, double cols, double inner) const;
  /// A transformer layer's linear GEMM: gemm_s, or in FP8 with its casts (TrainingConfig::fp8).
  double linear_s(const BlockShape& x, double rows, double cols, double inner) const;
  double tier_bandwidth(int tier_index, const std::vector<double>& efficiency) const;
  LayerForward layer_forward(const TrainingConfig& t, const BlockShape& x) const;
  LayerPasses layer_passes(const TrainingConfig& t, const BlockShape& x, const LayerForward& f,
                           Recompute recompute, BlockCosts* parts) const;
  void add_parameters(const TrainingConfig& t, const BlockShape& x, BlockCosts& c) const;
  void add_activations(const TrainingConfig& t, const BlockShape& x, BlockCosts& c) const;
  /// add_activations for eager PyTorch (stack fsdp without torch.compile), tensor by tensor.
  void add_eager_activations(const TrainingConfig& t, const BlockShape& x, BlockCosts& c) const;

  TransformerConfig model_;
  Cluster cluster_;
  Calibration cal_;
};

/// Plain PyTorch's mixed precision: fp32 weights that autocast casts to bf16 for each matrix
/// product (stack fsdp, unsharded: one rank, or DDP), rather than FSDP's bf16 gathered weights.
/// The residual stream is then fp32, and the bf16 copies of the weights stay alive as long as
/// the activations that reference them.
bool autocast_over_fp32_weights(const TrainingConfig& t);

/// The ranks one expert's shard is replicated over (Megatron-Core's expert data parallel):
/// tp × cp × dp ÷ (etp × ep); dp × cp ÷ ep when the experts split as the dense layers.
int expert_data_parallel(const TrainingConfig& t);

/// Blocking sends charged per micro-batch to every pipeline stage: two per virtual chunk (an
/// activation forward, a gradient backward; at the ends of the pipeline the receive that waits
/// on the critical path is charged like a send: the form the calibration was fitted with).
int stage_sends(const TrainingConfig& config);

/// Communication of `chunks` equal parts on one stream, part i released `i · gap_s` after the
/// first, each able to start as its chunk's compute (`own_s`) begins: the time it runs past the
/// end of the last chunk's compute ((chunks − 1) · gap_s + own_s). Read backwards in time, the
/// same for gathers each needed before its chunk's compute.
double exposed_after_chunks(double comm_s, int chunks, double gap_s, double own_s);

}  // namespace paraplan
