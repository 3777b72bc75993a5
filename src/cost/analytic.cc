// Formulas of docs/cost-models.md, section `analytic`.
#include "cost/analytic.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ir/error.h"

namespace paraplan {
namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

/// Ring all-reduce (or reduce-scatter + all-gather) of `bytes` over n devices.
double ring_allreduce_s(double bytes, int n, double bandwidth, double step_latency) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) / n * bytes / bandwidth + 2.0 * (n - 1) * step_latency;
}

}  // namespace

Calibration default_calibration(const std::string& device) {
  Calibration c;
  if (device == "A100") return c;
  if (device == "H100") {
    c.device = "H100";
    c.memory_bandwidth_bytes_per_s = 3.35e12;
    return c;
  }
  if (device == "H200") {
    c.device = "H200";
    c.memory_bandwidth_bytes_per_s = 4.8e12;
    return c;
  }
  bad("no shipped calibration for device \"" + device + "\" (shipped: A100, H100, H200)");
}

AnalyticCostModel::AnalyticCostModel(TransformerConfig model, Cluster cluster,
                                     Calibration calibration)
    : model_(std::move(model)), cluster_(std::move(cluster)), cal_(std::move(calibration)) {}

void AnalyticCostModel::check(const TrainingConfig& t) const {
  const auto& m = model_;
  if (t.tp < 1 || t.pp < 1 || t.dp < 1)
    bad("--tp, --pp and --dp must be at least 1");
  if (m.num_attention_heads % t.tp)
    bad(fmt::format("--tp {}: the {} attention heads must be divisible by the tensor-parallel size",
                    t.tp, m.num_attention_heads));
  if (m.num_kv_heads % t.tp && t.tp % m.num_kv_heads)
    bad(fmt::format("--tp {}: the {} key-value heads must divide or be divisible by the "
                    "tensor-parallel size", t.tp, m.num_kv_heads));
  if (t.pp > m.num_layers)
    bad(fmt::format("--pp {}: more pipeline stages than the model's {} layers", t.pp, m.num_layers));
  if (t.micro_batch < 1 || t.global_batch < 1 || t.seq_len < 1)
    bad("--batch, --micro-batch and --seq-len must be at least 1");
  if (t.global_batch % (t.micro_batch * t.dp))
    bad(fmt::format("--batch {}: the global batch must be divisible by micro-batch × data-parallel "
                    "size = {} × {}", t.global_batch, t.micro_batch, t.dp));
  if (t.devices() > cluster_.device_count())
    bad(fmt::format("tp × pp × dp = {} × {} × {} = {} devices, but the cluster has {}", t.tp, t.pp,
                    t.dp, t.devices(), cluster_.device_count()));
  if (t.sequence_parallel && t.seq_len % t.tp)
    bad(fmt::format("--sequence-parallel: the sequence length {} must be divisible by --tp {}",
                    t.seq_len, t.tp));
  if (t.zero_stage < 0 || t.zero_stage > 3) bad("--zero must be 0, 1, 2 or 3");
  if (cluster_.device_types.empty() || cluster_.device_types[0].peak_flops_per_s <= 0)
    bad("the cluster's device type has no peak FLOP/s; the analytic model needs it");
}

AnalyticResult AnalyticCostModel::evaluate(const TrainingConfig& t) const {
  check(t);
  const auto& m = model_;
  const DeviceType& dev = cluster_.device_types[0];
  const double peak = dev.peak_flops_per_s;
  const double hbm = cal_.memory_bandwidth_bytes_per_s;
  const int node = cluster_.machine_sizes.empty() ? 1 : cluster_.machine_sizes[0];
  const double b = static_cast<double>(t.micro_batch), s = static_cast<double>(t.seq_len),
               h = static_cast<double>(m.hidden_size), tp = t.tp;
  const double tokens = b * s;
  const double q_dim = static_cast<double>(m.num_attention_heads * m.head_dim);
  const double kv_dim = static_cast<double>(m.num_kv_heads * m.head_dim);
  const double heads_per_device = static_cast<double>(m.num_attention_heads) / tp;
  // Megatron pads the vocabulary to a multiple of 128 × tp.
  const double vocab = std::ceil(static_cast<double>(m.vocab_size) / (128.0 * tp)) * 128.0 * tp;

  auto gemm_s = [&](double rows, double cols, double inner) {
    double flops = 2 * rows * cols * inner;
    double bytes = 2 * (rows * inner + inner * cols + rows * cols);
    return std::max(flops / (peak * cal_.gemm_efficiency), bytes / hbm);
  };
  // Tier bandwidth seen by a group of `members` devices spread `per_node` to a node.
  auto tier_bw = [&](int members, int per_node, const std::vector<double>& eff) {
    const LinkTier& inner = cluster_.tiers.at(0);
    if (members <= node || cluster_.tiers.size() < 2)
      return inner.bandwidth_bytes_per_s * eff.at(0);
    return cluster_.tiers[1].bandwidth_bytes_per_s * std::max(1, per_node) * eff.at(1);
  };

  // One layer, one micro-batch, forward, on one device.
  double mlp_gemms;
  const double ffn = static_cast<double>(m.moe() ? m.expert_ffn_hidden_size : m.ffn_hidden_size);
  const double active = m.moe() ? static_cast<double>(m.experts_per_token + m.shared_experts) : 1.0;
  if (m.gated_mlp)
    mlp_gemms = gemm_s(tokens * active, 2 * ffn / tp, h) + gemm_s(tokens * active, h, ffn / tp);
  else
    mlp_gemms = gemm_s(tokens * active, ffn / tp, h) + gemm_s(tokens * active, h, ffn / tp);
  const double proj_gemms = gemm_s(tokens, (q_dim + 2 * kv_dim) / tp, h) + gemm_s(tokens, h, q_dim / tp);
  const double attn_s = 4 * b * s * s * q_dim / tp / (peak * cal_.attention_efficiency);
  const double mem_s = (cal_.hidden_bytes_per_element * tokens * h / tp +
                        cal_.score_bytes_per_element * b * heads_per_device * s * s) / hbm;
  const double forward_s = proj_gemms + mlp_gemms + attn_s + mem_s;
  double passes = 3;  // forward + backward (twice the forward)
  int tp_collectives = 4;
  if (t.recompute == Recompute::kFull) {
    passes = 4;
    tp_collectives = 6;
  }
  double layer_compute = passes * forward_s;
  if (t.recompute == Recompute::kSelective) layer_compute += attn_s + mem_s;
  const double act_bytes = tokens * h * 2;
  const double tp_bw = tier_bw(t.tp, std::min(t.tp, node), cal_.collective_efficiency);
  const double tp_comm = tp_collectives * ring_allreduce_s(act_bytes, t.tp, tp_bw, cal_.ring_step_latency_s);
  const double layer_s = layer_compute + tp_comm + 3 * cal_.layer_overhead_s;

  const double layers_per_stage = std::ceil(static_cast<double>(m.num_layers) / t.pp);
  const double stage_s = layers_per_stage * layer_s;
  double pp_s = 0;
  if (t.pp > 1) {
    const bool crosses = t.tp * t.pp > node;
    const double bw = (crosses && cluster_.tiers.size() > 1 ? cluster_.tiers[1] : cluster_.tiers[0])
                          .bandwidth_bytes_per_s *
                      cal_.p2p_efficiency.at(crosses ? 1 : 0);
    pp_s = 2 * (act_bytes / bw + cal_.p2p_overhead_s);
  }
  const double head_s = 3 * gemm_s(tokens, vocab / tp, h) + 3 * tokens * vocab / tp * 4 / hbm;
  const double last_s = stage_s + head_s + pp_s;
  const double middle_s = stage_s + pp_s;
  const double microbatches = static_cast<double>(t.microbatches());
  AnalyticResult r;
  r.pipeline_s = (microbatches - 1) * std::max(middle_s, last_s) + (t.pp - 1) * middle_s + last_s;
  r.bubble_s = r.pipeline_s - microbatches * std::max(middle_s, last_s);
  r.compute_per_microbatch_s = layers_per_stage * layer_compute + head_s;
  r.tp_comm_per_microbatch_s = layers_per_stage * tp_comm;
  r.pp_comm_per_microbatch_s = pp_s;

  // Parameters held by the most loaded device (first stage: layers + embedding).
  double layer_params = m.attention_parameters() + m.mlp_parameters(m.ffn_hidden_size) +
                        (m.biases ? 2.0 : 1.0) * h;
  if (m.moe())
    layer_params = m.attention_parameters() +
                   static_cast<double>(m.num_experts) * m.mlp_parameters(m.expert_ffn_hidden_size);
  const double embed = vocab * h;  // the first stage's embedding (the last stage's head is alike)
  const double params = (layers_per_stage * layer_params + embed) / tp;
  const int dp_per_node = std::max(1, node / std::max(1, t.tp * t.pp));
  const double dp_bw = tier_bw(t.devices(), dp_per_node, cal_.collective_efficiency);
  r.dp_allreduce_s = ring_allreduce_s(params * cal_.gradient_bytes_per_parameter, t.dp, dp_bw,
                                      cal_.ring_step_latency_s);
  const double optimizer_share = t.zero_stage >= 1 ? 1.0 / t.dp : 1.0;
  r.optimizer_s = params * optimizer_share * cal_.optimizer_bytes_per_parameter / hbm;
  r.iteration_time_s = r.pipeline_s + r.dp_allreduce_s + r.optimizer_s + cal_.iteration_overhead_s;

  const double total_tokens = static_cast<double>(t.global_batch) * s;
  r.tokens_per_s = total_tokens / r.iteration_time_s;
  // Model FLOPs per token: 6 × active parameters (without embeddings) + attention.
  const double model_flops = total_tokens * (6 * (m.active_parameters() - m.embedding_parameters()) +
                                             12.0 * static_cast<double>(m.num_layers) * q_dim * s +
                                             6 * h * vocab);
  r.tflops_per_device = model_flops / r.iteration_time_s / t.devices() / 1e12;
  r.mfu = r.tflops_per_device * 1e12 / peak;

  // Memory (Korthikanti et al. 2022, bytes, 16-bit activations).
  MemoryBreakdown& mem = r.memory;
  const double dp = t.dp;
  mem.weights_bytes = params * 2 / (t.zero_stage >= 3 ? dp : 1.0);
  mem.gradients_bytes = params * cal_.gradient_bytes_per_parameter / (t.zero_stage >= 2 ? dp : 1.0);
  mem.optimizer_bytes = params * 12 / (t.zero_stage >= 1 ? dp : 1.0);
  const double a_over_h = static_cast<double>(m.num_attention_heads) * s / h;
  double per_layer;
  const double sbh = s * b * h;
  const double full_layer = t.sequence_parallel ? sbh * (34 / tp + 5 * a_over_h / tp)
                                                : sbh * (10 + 24 / tp + 5 * a_over_h / tp);
  switch (t.recompute) {
    case Recompute::kFull: per_layer = t.sequence_parallel ? 2 * sbh / tp : 2 * sbh; break;
    case Recompute::kSelective: per_layer = t.sequence_parallel ? sbh * 34 / tp : sbh * (10 + 24 / tp); break;
    default: per_layer = full_layer; break;
  }
  const double in_flight = std::min<double>(t.pp, microbatches);
  mem.activations_bytes = per_layer * layers_per_stage * in_flight +
                          (t.recompute == Recompute::kFull ? full_layer : 0.0);
  mem.buffers_bytes = 2 * tokens * vocab / tp * 4 / (t.pp > 1 ? 2.0 : 1.0);
  mem.peak_bytes = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                   mem.activations_bytes + mem.buffers_bytes;
  r.fits = mem.peak_bytes <= dev.memory_bytes;
  return r;
}

}  // namespace paraplan
