// What a pipeline stage holds and synchronises, in the analytic model (docs/cost-models.md,
// section `analytic`): its parameters and memory per device, the collectives of its parameters
// (the all-reduce, ZeRO's reduce-scatters and gathers) on the links they cross, how much of them
// the backward and the next forward hide chunk by chunk, ZeRO 3's per-layer collectives behind
// FSDP's prefetch, and the optimizer step.
#include <algorithm>
#include <cmath>

#include "cost/analytic.h"
#include "cost/collectives.h"

namespace paraplan {

int expert_data_parallel(const TrainingConfig& t) {
  return t.tp * t.cp * t.dp / (t.expert_tp() * t.ep);
}

double exposed_after_chunks(double comm_s, int chunks, double gap_s, double own_s) {
  double finish = 0;
  for (int i = 0; i < chunks; ++i) finish = std::max(finish, i * gap_s) + comm_s / chunks;
  return std::max(0.0, finish - ((chunks - 1) * gap_s + own_s));
}

SyncParts AnalyticCostModel::sync_parts(const TrainingConfig& t, double dense_params,
                                        double expert_params) const {
  const int inner = t.tp * t.cp * t.pp;  // data-parallel replicas sit this far apart
  // The states' collectives run within a shard group (HSDP: the nearest ranks of dp × cp); the
  // groups, this many, then all-reduce their shards' gradients, the groups' ranks a group apart.
  const int dense_group = t.shard_ranks(), expert_group = expert_data_parallel(t);
  const int replicas = t.dp * t.cp / dense_group;
  const double g = t.bf16_gradient_reduction ? 2.0 : cal_.gradient_bytes_per_parameter;
  SyncParts parts;
  for (auto [params, n] :
       {std::pair{dense_params, dense_group}, std::pair{expert_params, expert_group}}) {
    if (params <= 0 || n <= 1) continue;
    const CollectiveGroup grp = collective_group(n, inner);
    const double lat = ring_latency_s(n, grp.nodes, cal_);
    // NCCL picks the faster of ring and tree for an all-reduce; reduce-scatter and all-gather
    // only run as rings.
    parts.allreduce_s += std::min(ring_allreduce_s(params * g, n, grp.bandwidth, lat),
                                  tree_allreduce_s(params * g, n, grp.nodes, grp.bandwidth, cal_));
    parts.reduce_scatter_s += ring_half_s(params * g, n, grp.bandwidth, lat);
    // FP8 parameters gather in FP8 (the embedding and norms, which stay bf16, priced so too:
    // a few percent of a model's bytes).
    parts.weight_gather_s +=
        ring_half_s(params * (t.fp8_param_gather ? 1.0 : 2.0), n, grp.bandwidth, lat);
  }
  if (replicas > 1 && dense_params > 0) {
    const double shard = dense_params * g / dense_group;
    const CollectiveGroup grp = collective_group(replicas, inner * dense_group);
    const double lat = ring_latency_s(replicas, grp.nodes, cal_);
    parts.replica_allreduce_s =
        std::min(ring_allreduce_s(shard, replicas, grp.bandwidth, lat),
                 tree_allreduce_s(shard, replicas, grp.nodes, grp.bandwidth, cal_));
  }
  return parts;
}

double AnalyticCostModel::gradient_sync_s(const TrainingConfig& t, double dense_params,
                                          double expert_params, double backward_window_s) const {
  const SyncParts p = sync_parts(t, dense_params, expert_params);
  const double m = static_cast<double>(t.microbatches());
  const double slowdown =
      t.stack == Stack::kMegatron ? cal_.comm_overlap_slowdown : cal_.overlap_slowdown;
  // Interleaved: each of the vpp model chunks reduces its gradients once its last backward is
  // done, the chunks' last backwards min(m, pp) chunk passes apart; the forward's parameter
  // gathers mirror it. One chunk: the last micro-batch's backward (or first forward) alone.
  const int chunks = t.pp > 1 && t.vpp > 1 ? t.vpp : 1;
  const double own_backward = backward_window_s / chunks;
  const double gap = std::min<double>(m, t.pp);
  // Overlapped communication: exposed beyond the compute, the hidden part slowing the compute.
  auto overlapped = [&](double seconds, double own) {
    if (!std::isfinite(own)) return slowdown * seconds;
    const double exposed = exposed_after_chunks(seconds, chunks, gap * own, own);
    return exposed + slowdown * (seconds - exposed);
  };
  switch (t.zero_stage) {
    case 0:  // one all-reduce
      return t.overlap_grad_reduce ? overlapped(p.allreduce_s, own_backward) : p.allreduce_s;
    case 1: {  // reduce-scatter of the gradients, all-gather of the updated 16-bit weights
      const double reduce =
          t.overlap_grad_reduce ? overlapped(p.reduce_scatter_s, own_backward) : p.reduce_scatter_s;
      const double gather = t.overlap_param_gather ? overlapped(p.weight_gather_s, own_backward / 2)
                                                   : p.weight_gather_s;
      return reduce + gather;
    }
    case 2: {  // reduce-scatter after every micro-batch's backward, one all-gather of weights
      auto reduce = [&](double seconds) {
        if (!t.overlap_grad_reduce) return seconds;
        const double hidden = std::min(seconds, backward_window_s);
        return seconds - hidden + slowdown * hidden;
      };
      return m * reduce(p.reduce_scatter_s) + p.weight_gather_s;
    }
    default:  // ZeRO-3: nothing after the passes; its per-layer collectives are zero3_microbatch_s
      return 0;
  }
}

double AnalyticCostModel::zero3_gathered_bytes(const TrainingConfig& t, const BlockCosts& c,
                                               bool first, bool last) const {
  if (t.zero_stage != 3) return 0;
  // The gathered 16-bit weights of the layers in flight (the current one and the prefetched
  // next), the current layer's unsharded gradient before its reduce-scatter, and the root unit
  // (embedding, LM head), which stays gathered through the pass.
  const double layer_params = c.layer_dense_params + c.layer_expert_params;
  const double reduce_bytes = t.bf16_gradient_reduction ? 2.0 : cal_.gradient_bytes_per_parameter;
  // FSDP's float8 all-gather gathers (and the GEMMs read) float8 weights: 1 byte each.
  const double gathered = t.fp8 && t.fp8_param_gather ? 1.0 : 2.0;
  return 2 * gathered * layer_params + reduce_bytes * layer_params +
         2 * ((first ? c.embedding_params : 0.0) + (last ? c.head_params : 0.0));
}

double AnalyticCostModel::zero3_microbatch_s(const TrainingConfig& t, const BlockCosts& c,
                                             int layers, double work_s) const {
  SyncParts layer = sync_parts(t, c.layer_dense_params, c.layer_expert_params);
  SyncParts root = sync_parts(t, c.embedding_params + c.head_params, 0);
  layer.reduce_scatter_s += layer.replica_allreduce_s;
  root.reduce_scatter_s += root.replica_allreduce_s;
  const double n = layers;
  // ZeRO 3 gathers a layer's weights before its forward and again before its backward, and
  // reduce-scatters its gradients after the backward (HSDP: then all-reduces its shard across
  // the replicas); the next layer's gather is prefetched while the current one computes. The
  // root unit (embedding, LM head) is gathered first and reduced last, the first layer's gather
  // waits, the last reduction ends the pass.
  const double forward_compute =
      n * (c.layer_forward_s + c.layer_forward_comm_s) + (c.embedding_s + c.head_s) / 3;
  const double backward_compute = std::max(0.0, work_s - forward_compute);
  // DeepSpeed's ZeRO 3 releases a layer's weights after every forward and fetches them in its
  // pre-forward and pre-backward hooks (deepspeed/runtime/zero/parameter_offload.py): a layer
  // recomputed in the backward is gathered once more. FSDP keeps the unit gathered from its
  // pre-backward unshard through the recomputed forward and the backward.
  const double regathered =
      t.stack == Stack::kDeepSpeed && t.recompute == Recompute::kFull
          ? (t.recompute_layers > 0 ? std::min(n, static_cast<double>(t.recompute_layers)) : n)
          : 0.0;
  const double backward_gathers = n + regathered;
  const double forward_comm = root.weight_gather_s + n * layer.weight_gather_s;
  const double backward_comm =
      backward_gathers * layer.weight_gather_s + n * layer.reduce_scatter_s + root.reduce_scatter_s;
  const double exposed = root.weight_gather_s + layer.weight_gather_s +
                         std::max(0.0, (n - 1) * layer.weight_gather_s - forward_compute) +
                         layer.reduce_scatter_s + root.reduce_scatter_s +
                         std::max(0.0, backward_gathers * layer.weight_gather_s +
                                           (n - 1) * layer.reduce_scatter_s - backward_compute);
  const double hidden = std::max(0.0, forward_comm + backward_comm - exposed);
  return exposed + cal_.overlap_slowdown * hidden;
}

double AnalyticCostModel::optimizer_step_s(const TrainingConfig& t, double dense_params,
                                           double expert_params) const {
  const bool sharded = t.zero_stage >= 1;
  const double params = dense_params / (sharded ? t.shard_ranks() : 1) +
                        expert_params / (sharded ? expert_data_parallel(t) : 1);
  // The step's traffic scales with the state it reads and writes (the calibration's figure is
  // fp32 Adam's, 12 bytes of state a parameter).
  const double traffic =
      cal_.optimizer_bytes_per_parameter * optimizer_state_bytes(t) / optimizer_state_bytes({});
  return params * traffic / cal_.memory_bandwidth_bytes_per_s;
}

std::pair<double, double> AnalyticCostModel::stage_parameters(const BlockCosts& c,
                                                              const TrainingConfig& t, int stage,
                                                              int layers) const {
  const double dense = layers * c.layer_dense_params + (stage == 0 ? c.embedding_params : 0.0) +
                       (stage == t.pp - 1 ? c.head_params : 0.0);
  return {dense, layers * c.layer_expert_params};
}

MemoryBreakdown AnalyticCostModel::stage_memory(const TrainingConfig& t, const BlockCosts& c,
                                                int stage, int layers) const {
  // 1F1B: stage s holds pp − s micro-batches' activations. Interleaved (Megatron-Core's
  // schedule): rank s warms up (pp − s − 1)·2 + (vpp − 1)·pp model chunks and holds one more,
  // each chunk 1/vpp of its layers — pp + (pp − 1)/vpp micro-batches on the first rank
  // (Korthikanti et al.), pp − (pp − 1)/vpp on the last; never more than the micro-batches.
  const double m = static_cast<double>(t.microbatches());
  const double in_flight =
      t.vpp > 1 ? std::min(m, (2.0 * (t.pp - stage - 1) + (t.vpp - 1.0) * t.pp + 1) / t.vpp)
                : std::min<double>(t.pp - stage, m);
  return stage_memory(t, c, layers, stage == 0, stage == t.pp - 1, in_flight);
}

MemoryBreakdown AnalyticCostModel::stage_memory(const TrainingConfig& t, const BlockCosts& c,
                                                int layers, bool first, bool last,
                                                double in_flight) const {
  const double n = layers;
  const double dense =
      n * c.layer_dense_params + (first ? c.embedding_params : 0.0) + (last ? c.head_params : 0.0);
  const double expert = n * c.layer_expert_params;
  const double dense_shards = t.shard_ranks(), expert_shards = expert_data_parallel(t);
  auto sharded = [&](double bytes_per_param, int from_stage) {
    const bool on = t.zero_stage >= from_stage;
    return bytes_per_param * (dense / (on ? dense_shards : 1) + expert / (on ? expert_shards : 1));
  };
  MemoryBreakdown mem;
  // Megatron-Core's gradient buffer is fp32 unless the reduction is in bf16 (its DDP config's
  // grad_reduce_in_fp32 = not --grad-reduce-in-bf16), then it is the parameters' bf16. FSDP
  // keeps its sharded gradients in the parameters' fp32 whatever it reduces in.
  const double g = t.bf16_gradient_reduction && t.stack == Stack::kMegatron
                       ? 2.0
                       : cal_.gradient_bytes_per_parameter;
  if (t.zero_stage == 3) {
    // FSDP / ZeRO 3 keeps no 16-bit copy: the sharded fp32 master is the weight (4 bytes), with
    // the sharded gradients and Adam's two moments (8 bytes).
    mem.weights_bytes = sharded(4, 3);
    mem.gradients_bytes = sharded(g, 3);
    mem.optimizer_bytes = sharded(8, 3);
  } else {
    mem.weights_bytes = sharded(2, 3);
    // FP8: Transformer Engine keeps each linear weight's FP8 copy and its transpose beside the
    // bf16 weight; with FP8 parameters the FP8 weight and its transpose are all there is (the
    // optimizer's fp32 main parameters stand for the bf16 copy).
    if (t.fp8 && !t.fp8_param_gather)
      mem.weights_bytes += 2 * n * (c.layer_dense_params + c.layer_expert_params);
    mem.gradients_bytes = sharded(g, 2);
    mem.optimizer_bytes = sharded(optimizer_state_bytes(t), 1);
  }
  const double recomputed =
      t.recompute == Recompute::kFull
          ? (t.recompute_layers > 0
                 ? std::min<double>(n, static_cast<double>(t.recompute_layers) * t.vpp)
                 : n)
          : 0.0;
  mem.activations_bytes = in_flight * (recomputed * c.layer_activation_bytes +
                                       (n - recomputed) * c.layer_plain_activation_bytes);
  const double recompute_working = recomputed > 0 ? c.recompute_working_bytes : 0.0;
  const double logits = last ? c.logits_bytes : 0.0;
  if (t.stack == Stack::kFsdp) {
    // Eager autograd frees each node's tensors as it goes: the loss's buffers are gone before
    // the first layer is recomputed, so the larger of the two sets the peak.
    mem.buffers_bytes = std::max(recompute_working, logits);
  } else {
    mem.buffers_bytes = recompute_working + logits;
  }
  if (autocast_over_fp32_weights(t)) {
    // Autocast's bf16 copies of the weights, kept by the matrix products that saved them for
    // the backward: every layer whose activations are kept, the one being recomputed, and the
    // LM head's matrix (the embedding's, when tied), used last in the forward.
    const double head =
        last ? std::max(c.head_params, model_.tied_embeddings ? c.embedding_params : 0.0) : 0.0;
    const double kept_layers = n - recomputed + (recomputed > 0 ? 1.0 : 0.0);
    mem.weights_bytes += 2 * (kept_layers * (c.layer_dense_params + c.layer_expert_params) + head);
  }
  if (layers > 0) mem.buffers_bytes += zero3_gathered_bytes(t, c, first, last);
  mem.fragmentation_bytes =
      cal_.allocator_fragmentation * (mem.activations_bytes + mem.buffers_bytes);
  // Communicators are created on first use: Megatron's embedding group (the tied embedding's
  // gradient all-reduce between the first and last stage) only with tied embeddings.
  const int communicators = (t.tp > 1) + (t.cp > 1) + (t.pp > 1) +
                            (t.pp > 1 && model_.tied_embeddings) + (t.dp * t.cp > 1) + (t.ep > 1);
  mem.reserved_bytes = cal_.runtime_reserved_bytes + communicators * cal_.nccl_communicator_bytes;
  mem.peak_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                   mem.activations_bytes + mem.buffers_bytes + mem.fragmentation_bytes +
                   mem.reserved_bytes;
  return mem;
}

}  // namespace paraplan
