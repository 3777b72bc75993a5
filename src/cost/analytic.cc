// Formulas of docs/cost-models.md, section `analytic`.
#include "cost/analytic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cost/collectives.h"
#include "ir/error.h"
#include "ir/training_rules.h"

namespace paraplan {
namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::kUsage, "", message); }

}  // namespace

int stage_sends(const TrainingConfig& t) { return t.pp < 2 ? 0 : 2 * t.vpp; }

Calibration default_calibration(const std::string& device) {
  const Calibration a100;
  if (device == "A100") return a100;
  // Hopper from published device figures and what the A100 fit says about the software
  // (docs/cost-models.md, "Transfer to new hardware"):
  // - tensor-core work reaches the A100 fit's share of peak scaled by the published maximum
  //   achievable matmul FLOP/s (stas00/ml-engineering's MAMF table, BF16: H100 SXM 80.1 %, A100
  //   SXM 86.9 % of peak);
  // - the GEMM size at half efficiency grows with the peak (the fixed launch and tail time it
  //   stands for is the same);
  // - memory-bound kernels reach the A100 fit's share of the HBM peak (A100 SXM 2.039 TB/s);
  // - bytes moved per element, framework overheads, collective efficiencies, latencies and the
  //   memory terms are the software's and the links' (the links' rates are the cluster's) and
  //   carry over unchanged.
  // - attention kernels by what their authors publish: FlashAttention-2 reaches up to 73 % of
  //   A100's peak and 35 % of H100's (it uses none of Hopper's asynchronous tensor-core
  //   instructions); the FlashAttention-3-class kernels (cuDNN's fused attention, which
  //   Megatron-Core calls through Transformer Engine) up to 75 % of H100's;
  auto hopper = [&](const std::string& name, double hbm_bytes_per_s) {
    Calibration c = a100;
    c.device = name;
    const double matmul = 0.801 / 0.869;
    c.gemm_efficiency *= matmul;
    c.attention_efficiency *= matmul;
    const double fa2 = 0.35 / 0.73, fa3 = 0.75 / 0.73;
    c.fused_attention_efficiency = a100.flash_attention_efficiency * fa3;
    c.fused_attention_backward_efficiency = a100.flash_backward_efficiency * fa3;
    c.flash_attention_efficiency *= fa2;
    c.flash_backward_efficiency *= fa2;
    c.gemm_half_efficiency_flops *= 989e12 / 312e12;
    c.memory_bandwidth_bytes_per_s =
        hbm_bytes_per_s * (a100.memory_bandwidth_bytes_per_s / 2.039e12);
    return c;
  };
  if (device == "H100") return hopper("H100", 3.35e12);
  if (device == "H200") return hopper("H200", 4.8e12);
  // Blackwell by the same transfer: cuBLAS and cuDNN reach on it the share of peak they reach
  // on Hopper (no published maximum-achievable matmul rate for it at hand), the GEMM size at
  // half efficiency grows with the peak, memory-bound kernels reach the A100 fit's share of its
  // HBM (B200 7.7 TB/s, GB200 8 TB/s, the HGX B200 and GB200 NVL72 datasheets).
  auto blackwell = [&](const std::string& name, double peak, double hbm_bytes_per_s) {
    Calibration c = hopper(name, hbm_bytes_per_s);
    c.gemm_half_efficiency_flops = a100.gemm_half_efficiency_flops * peak / 312e12;
    return c;
  };
  if (device == "B200") return blackwell("B200", 2.25e15, 7.7e12);
  if (device == "GB200") return blackwell("GB200", 2.5e15, 8e12);
  bad("no shipped calibration for device \"" + device +
      "\" (shipped: A100, H100, H200, B200, GB200; give "
      "one with --calibration FILE)");
}

AnalyticCostModel::AnalyticCostModel(TransformerConfig model, Cluster cluster,
                                     Calibration calibration)
    : model_(std::move(model)), cluster_(std::move(cluster)), cal_(std::move(calibration)) {}

double AnalyticCostModel::device_memory_bytes() const {
  return cluster_.device_types.empty() ? 0 : cluster_.device_types[0].memory_limit_bytes();
}

void AnalyticCostModel::check(const TrainingConfig& t) const {
  if (auto v = check_training(model_, t, cluster_.device_count()))
    throw RuleViolation(std::move(*v));
  if (cluster_.device_types.empty() || cluster_.device_types[0].peak_flops_per_s <= 0)
    bad("the cluster's device type has no peak FLOP/s; the analytic model needs it");
  if (cluster_.tiers.empty()) bad("the cluster has no link tiers; the analytic model needs them");
  const std::string& device = cluster_.device_types[0].name;
  if (t.fp8 && device.find("H100") == std::string::npos &&
      device.find("H200") == std::string::npos && device.find("B200") == std::string::npos)
    throw RuleViolation({Knob::kPrecision,
                         "fp8_needs_hopper",
                         "fp8",
                         "FP8 matrix products need FP8 tensor cores (H100, H200, B200, GB200); " +
                             cluster_.device_types[0].name + " has none",
                         {}});
  if (cal_.collective_efficiency.empty() || cal_.p2p_efficiency.empty())
    bad("the calibration has no collective or p2p efficiency");
}

// The sizes every part of a block's costs reads, per device and micro-batch.
struct AnalyticCostModel::BlockShape {
  double peak = 0, hbm = 0;  ///< FLOP/s and memory bandwidth of one device
  int node = 1;              ///< devices per machine
  double b = 0, s = 0, h = 0, tp = 1, cp = 1;
  double s_local = 0, tokens = 0;  ///< sequence per device (s / cp), tokens per micro-batch
  double q_dim = 0, kv_dim = 0, heads_per_device = 0;
  /// The width the two s × s products run over, per token: (score width + value width) / 2
  /// summed over heads (q_dim for standard attention; MLA scores over qk_nope + qk_rope and
  /// weighs v_head_dim).
  double product_dim = 0;
  /// Scored (query, key) pairs over those of full causal attention, averaged over the layers
  /// (sliding windows); FlashAttention skips the blocks outside the window.
  double window_share = 1;
  double vocab = 0;         ///< padded by Megatron to a multiple of 128 × tp
  double moe_fraction = 0;  ///< MoE layers / layers
  double experts = 0, top_k = 0;
  double load = 1;  ///< the busiest expert rank's tokens over the mean
  double etp = 1;   ///< expert tensor parallel: the ways each expert is split
  /// The tokens one rank routes: all the micro-batch's when the experts split as the dense
  /// layers (tp), else its etp ÷ tp share (its sequence-parallel part, gathered over etp).
  double moe_tokens = 0;
  bool flash = true;
  bool fp8 = false;      ///< the layers' linear GEMMs in FP8
  double act_bytes = 0;  ///< one micro-batch's hidden states (bf16)
};

// One layer's forward pass on one device, and the parts its backward reuses.
struct AnalyticCostModel::LayerForward {
  double forward_s = 0;
  double attn_s = 0, attn_backward_s = 0;  ///< the two s × s products, forward and backward
  double mem_s = 0;                        ///< memory-bound element-wise and score traffic
  double tp_gemm_s = 0;  ///< the projections' and MLP's GEMMs (what tensor-parallel comm feeds)
  /// The GEMMs torchtitan's per-op selective checkpointing recomputes: of a layer's matrix
  /// products in order (q, k, v, o, the MLP's), every second one (k, o, and the up or down
  /// projection); it saves the others' outputs and the attention's.
  double sac_recompute_s = 0;
  double shared_expert_s = 0;  ///< the shared experts' GEMMs (a MoE layer's share of the layer)
};

// A layer's passes: compute incl. framework overhead, and the blocking collectives of each.
struct AnalyticCostModel::LayerPasses {
  double forward = 0, forward_comm = 0, backward = 0, backward_comm = 0;
  double total() const { return forward + forward_comm + backward + backward_comm; }
};

AnalyticCostModel::BlockShape AnalyticCostModel::block_shape(const TrainingConfig& t) const {
  const auto& m = model_;
  BlockShape x;
  x.peak = cluster_.device_types[0].peak_flops_per_s;
  x.hbm = cal_.memory_bandwidth_bytes_per_s;
  x.node = cluster_.machine_sizes.empty() ? 1 : cluster_.machine_sizes[0];
  x.b = static_cast<double>(t.micro_batch);
  x.s = static_cast<double>(t.seq_len);
  x.h = static_cast<double>(m.hidden_size);
  x.tp = t.tp;
  x.cp = t.cp;
  x.s_local = x.s / x.cp;
  x.tokens = x.b * x.s_local;
  x.q_dim = static_cast<double>(m.num_attention_heads * m.head_dim);
  x.kv_dim = static_cast<double>(m.num_kv_heads * m.head_dim);
  x.heads_per_device = static_cast<double>(m.num_attention_heads) / x.tp;
  x.product_dim =
      m.mla() ? static_cast<double>(m.num_attention_heads) *
                    static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) / 2
              : x.q_dim;
  if (m.mla()) x.kv_dim = x.product_dim;  // every head's key and value, from the latent
  if (m.windowed_layers() > 0 && static_cast<double>(m.sliding_window) < x.s) {
    const double w = static_cast<double>(m.sliding_window),
                 share_of_layers =
                     static_cast<double>(m.windowed_layers()) / static_cast<double>(m.num_layers);
    // Causal pairs: s²/2; within a window of w keys: s·w − w²/2.
    const double windowed = (x.s * w - w * w / 2) / (x.s * x.s / 2);
    x.window_share = 1 - share_of_layers * (1 - windowed);
  }
  x.vocab = std::ceil(static_cast<double>(m.vocab_size) / (128.0 * x.tp)) * 128.0 * x.tp;
  x.moe_fraction =
      m.moe() ? static_cast<double>(m.moe_layers()) / static_cast<double>(m.num_layers) : 0.0;
  x.experts = static_cast<double>(m.num_experts);
  x.top_k = static_cast<double>(m.experts_per_token);
  x.etp = t.expert_tp();
  x.moe_tokens = x.tokens * x.etp / x.tp;
  // MoE: the busiest expert-parallel rank sets the pace; it holds experts / ep experts and
  // receives `load` times its mean share of the routed tokens.
  x.load = !m.moe()                    ? 1.0
           : t.moe_capacity_factor > 0 ? t.moe_capacity_factor
           : t.ep > 1                  ? cal_.moe_load_imbalance
                                       : 1.0;
  x.flash = t.attention == Attention::kFlash;
  x.fp8 = t.fp8;
  x.act_bytes = x.tokens * x.h * 2;
  return x;
}

double AnalyticCostModel::gemm_s(const BlockShape& x, double rows, double cols,
                                 double inner) const {
  const double flops = 2 * rows * cols * inner;
  const double bytes = 2 * (rows * inner + inner * cols + rows * cols);
  const double eff = cal_.gemm_efficiency * flops / (flops + cal_.gemm_half_efficiency_flops);
  return std::max(flops / (x.peak * eff), bytes / x.hbm);
}

double AnalyticCostModel::linear_s(const BlockShape& x, double rows, double cols,
                                   double inner) const {
  if (!x.fp8) return gemm_s(x, rows, cols, inner);
  // FP8 tensor cores run at twice the bf16 rate; the same share of it is reached at twice the
  // size (the fixed launch and tail time is the same). Operands are 1 byte, the output bf16.
  // The input is cast to FP8 (read bf16, write FP8: 3 bytes per element, with its amax); the
  // backward's gradient casts and transposes cost about twice that, as its two GEMMs do.
  const double flops = 2 * rows * cols * inner;
  const double bytes = rows * inner + inner * cols + 2 * rows * cols;
  const double eff = cal_.gemm_efficiency * flops / (flops + 2 * cal_.gemm_half_efficiency_flops);
  return std::max(flops / (2 * x.peak * eff), bytes / x.hbm) + 3 * rows * inner / x.hbm;
}

double AnalyticCostModel::tier_bandwidth(int tier_index, const std::vector<double>& eff) const {
  const auto i = static_cast<std::size_t>(
      std::min<int>(tier_index, static_cast<int>(cluster_.tiers.size()) - 1));
  return cluster_.tiers[i].bandwidth_bytes_per_s * eff.at(std::min(i, eff.size() - 1));
}

AnalyticCostModel::LayerForward AnalyticCostModel::layer_forward(const TrainingConfig& t,
                                                                 const BlockShape& x) const {
  const auto& m = model_;
  const double tokens = x.tokens, h = x.h, tp = x.tp;
  // One layer, one micro-batch, forward, on one device.
  auto mlp_s = [&](double ffn, double rows, double split) {
    return m.gated_mlp ? linear_s(x, rows, 2 * ffn / split, h) + linear_s(x, rows, h, ffn / split)
                       : linear_s(x, rows, ffn / split, h) + linear_s(x, rows, h, ffn / split);
  };
  double mlp = 0;
  if (x.moe_fraction < 1)
    mlp += (1 - x.moe_fraction) * mlp_s(static_cast<double>(m.ffn_hidden_size), tokens, tp);
  double moe_mem_s = 0, shared_expert_s = 0;
  if (m.moe()) {
    const double shared_ffn =
        static_cast<double>(m.shared_expert_ffn_hidden_size ? m.shared_expert_ffn_hidden_size
                                                            : m.expert_ffn_hidden_size);
    // One grouped GEMM over the local experts, each of its own small shape: the rows one expert
    // gets from the whole expert-parallel group, its matrices split etp ways.
    const double local_experts = x.experts / t.ep;
    const double moe_tokens = x.moe_tokens;
    const double expert_rows = moe_tokens * x.top_k * t.ep / x.experts * x.load;
    double moe =
        local_experts * mlp_s(static_cast<double>(m.expert_ffn_hidden_size), expert_rows, x.etp) +
        gemm_s(x, moe_tokens, x.experts, h);  // router
    if (m.shared_experts > 0) {
      shared_expert_s = mlp_s(shared_ffn, tokens * static_cast<double>(m.shared_experts), tp);
      moe += shared_expert_s;
    }
    // Memory-bound: the router's fp32 softmax and top-k over T × experts (write, read, write:
    // 12 bytes per score), the permutation of the tokens into expert order and back (each hidden
    // state read once and written top-k times, and the reverse, in bf16).
    moe_mem_s =
        (12 * moe_tokens * x.experts + 2 * 2 * moe_tokens * h * (1 + x.top_k * x.load)) / x.hbm;
    mlp += x.moe_fraction * moe;
  }
  double proj = 0;
  if (m.mla()) {  // latent projections are replicated over tp; the per-head ones are split
    const double a = static_cast<double>(m.num_attention_heads);
    const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    const double v = static_cast<double>(m.v_head_dim), r = static_cast<double>(m.kv_lora_rank);
    const double rq = static_cast<double>(m.q_lora_rank);
    proj = (m.q_lora_rank > 0 ? linear_s(x, tokens, rq, h) + linear_s(x, tokens, a * qk / tp, rq)
                              : linear_s(x, tokens, a * qk / tp, h)) +
           linear_s(x, tokens, r + static_cast<double>(m.qk_rope_head_dim), h) +
           linear_s(x, tokens, a * (static_cast<double>(m.qk_nope_head_dim) + v) / tp, r) +
           linear_s(x, tokens, h, a * v / tp);
  } else {
    proj = linear_s(x, tokens, (x.q_dim + 2 * x.kv_dim) / tp, h) +
           linear_s(x, tokens, h, x.q_dim / tp);
  }
  // The two s × s products (QKᵀ and the weighted sum of V). FlashAttention skips the masked half
  // of a causal attention and keeps the scores on chip, so it has no score traffic.
  LayerForward f;
  {
    const double ffn = static_cast<double>(m.ffn_hidden_size);
    f.sac_recompute_s =
        linear_s(x, tokens, x.kv_dim / tp, h) + linear_s(x, tokens, h, x.q_dim / tp) +
        (1 - x.moe_fraction) *
            (m.gated_mlp ? linear_s(x, tokens, ffn / tp, h) : linear_s(x, tokens, h, ffn / tp));
  }
  f.tp_gemm_s = proj + mlp;
  f.shared_expert_s = x.moe_fraction * shared_expert_s;
  // Megatron-Core calls Transformer Engine's fused (cuDNN) attention, and PyTorch's
  // scaled_dot_product_attention (FSDP, torchtitan, plain PyTorch) dispatches to cuDNN's on
  // Hopper too; Megatron-DeepSpeed calls the flash-attn package's FlashAttention-2. (On Ampere
  // the two are the same kernel class: the A100 calibration's values coincide.)
  const bool fused = t.stack != Stack::kDeepSpeed;
  const double flash_forward =
      fused ? cal_.fused_attention_efficiency : cal_.flash_attention_efficiency;
  const double flash_backward =
      fused ? cal_.fused_attention_backward_efficiency : cal_.flash_backward_efficiency;
  f.attn_s = (x.flash ? 0.5 * x.window_share : 1.0) * 4 * x.b * x.s_local * x.s * x.product_dim /
             tp / (x.peak * (x.flash ? flash_forward : cal_.attention_efficiency));
  // Soft-capping: a tanh per score on the special-function units, about 1/64 of a tensor-core
  // FLOP's rate: 16/head_dim of the products' time.
  if (m.attention_softcap > 0) f.attn_s *= 1 + 16.0 / static_cast<double>(m.head_dim);
  f.attn_backward_s = x.flash ? f.attn_s * flash_forward / flash_backward : f.attn_s;
  const double hidden_bytes =
      t.fused_elementwise ? cal_.hidden_bytes_per_element : cal_.eager_hidden_bytes_per_element;
  f.mem_s =
      (hidden_bytes * tokens * h / tp +
       (x.flash ? 0.0
                : cal_.score_bytes_per_element * x.b * x.heads_per_device * x.s_local * x.s)) /
      x.hbm;
  f.forward_s = proj + mlp + f.attn_s + f.mem_s + x.moe_fraction * moe_mem_s;
  return f;
}

// Collectives of one layer: tensor parallel (tp innermost), context parallel (stride tp),
// expert parallel (stride tp × cp).
AnalyticCostModel::LayerPasses AnalyticCostModel::layer_passes(const TrainingConfig& t,
                                                               const BlockShape& x,
                                                               const LayerForward& f, Recompute rc,
                                                               BlockCosts* parts) const {
  const auto& m = model_;
  const double forwards = rc == Recompute::kFull ? 2.0 : 1.0;  // forward passes per layer
  // The backward computes two products per forward product (three: FlashAttention's
  // recomputes QKᵀ, at its own, lower efficiency).
  double compute = (forwards + 2) * f.forward_s;
  if (x.flash) compute += 2.5 * f.attn_backward_s - 2 * f.attn_s;
  // Selective: Megatron recomputes the attention core; on the fsdp stack it is torchtitan's
  // per-op checkpointing, which recomputes every second GEMM and the element-wise work.
  if (rc == Recompute::kSelective)
    compute += (t.stack == Stack::kFsdp ? f.sac_recompute_s : f.attn_s) + f.mem_s;
  const CollectiveGroup tp_group = collective_group(t.tp, 1);
  const double tp_allreduce = ring_allreduce_s(x.act_bytes, t.tp, tp_group.bandwidth,
                                               ring_latency_s(t.tp, tp_group.nodes, cal_));
  // Half of a layer's tensor-parallel collectives are its MLP's: a MoE layer whose experts
  // split fewer ways (etp < tp) runs them over its etp group, on its share of the tokens.
  double mlp_allreduce = tp_allreduce;
  if (x.etp != x.tp) {
    const int etp = static_cast<int>(x.etp);
    const CollectiveGroup etp_group = collective_group(etp, 1);
    const double moe_allreduce =
        etp > 1 ? ring_allreduce_s(x.act_bytes * x.etp / x.tp, etp, etp_group.bandwidth,
                                   ring_latency_s(etp, etp_group.nodes, cal_))
                : 0.0;
    mlp_allreduce = (1 - x.moe_fraction) * tp_allreduce + x.moe_fraction * moe_allreduce;
  }
  double tp_comm = (forwards + 1) * (tp_allreduce + mlp_allreduce);
  if (t.tp_comm_overlap && t.tp > 1 && tp_group.nodes == 1) {
    // Userbuffers split each all-gather and reduce-scatter into tp chunks pipelined with the
    // GEMM chunks they feed or drain: one chunk stays exposed, or what the GEMMs cannot cover;
    // the hidden rest slows the GEMMs (the SMs and HBM bandwidth the transfers take). They work
    // inside one NVLink domain: a tensor-parallel group across nodes is priced exposed.
    const double gemm = (forwards + 2) * f.tp_gemm_s;
    const double exposed = std::max(tp_comm / t.tp, tp_comm - gemm);
    tp_comm = exposed + cal_.comm_overlap_slowdown * (tp_comm - exposed);
  }
  double cp_comm = 0;
  if (t.cp > 1) {  // ring attention: K and V chunks go round, overlapped with the attention
    const double kv_bytes =
        2 * x.tokens * std::max(x.kv_dim / x.tp, static_cast<double>(m.head_dim)) * 2;
    const CollectiveGroup cp_group = collective_group(t.cp, t.tp);
    const double passes = forwards + 2;  // backward sends K, V and their gradients
    const double wire = passes * ((t.cp - 1) * kv_bytes / cp_group.bandwidth +
                                  ring_latency_s(t.cp, cp_group.nodes, cal_));
    cp_comm = std::max(0.0, wire - (forwards + 2) * f.attn_s);
  }
  double ep_comm = 0;
  if (t.ep > 1) {  // dispatch and combine, forward and backward
    // Each device sends every routed copy of its tokens (bf16) to the rank holding the expert
    // and receives `load` times the mean back; the peers on its node over NVLink, the others
    // over its own network link, both at once. Peers sit tp × cp apart (etp apart in
    // Megatron-Core's expert grid when the experts split otherwise than the dense layers).
    const double sent = x.moe_tokens * x.top_k * x.h * 2 * x.load;
    const int stride = x.etp == x.tp ? t.tp * t.cp : static_cast<int>(x.etp);
    const int on_node = std::clamp(x.node / std::max(1, stride), 1, t.ep);
    const bool multi_tier = cluster_.tiers.size() > 1;
    const double intra =
        (on_node - 1.0) / t.ep * sent / tier_bandwidth(0, cal_.collective_efficiency);
    const double inter = (t.ep - on_node) / static_cast<double>(t.ep) * sent /
                         tier_bandwidth(multi_tier ? 1 : 0, cal_.collective_efficiency);
    const double latency =
        (on_node - 1) * cal_.ring_step_latency_s +
        (t.ep - on_node) * (multi_tier ? cal_.network_step_latency_s : cal_.ring_step_latency_s);
    ep_comm = x.moe_fraction * (2 * forwards + 2) * (std::max(intra, inter) + latency);
    if (t.moe_shared_expert_overlap) {
      // Megatron-Core launches the shared experts' GEMMs on a side stream right after the
      // dispatch's and the combine's all-to-alls (token_dispatcher.py: fc1 after the dispatch,
      // fc2 after the combine; their gradients in the backward): they hide as much of the
      // all-to-all as they take, at the cost overlapped work pays elsewhere.
      const double hidden = std::min(ep_comm, (forwards + 2) * f.shared_expert_s);
      ep_comm -= (1 - cal_.comm_overlap_slowdown) * hidden;
    }
  }
  if (parts) {
    parts->tp_comm_s = tp_comm;
    parts->cp_comm_s = cp_comm;
    parts->ep_comm_s = ep_comm;
  }
  // The forward pass holds one of the (forwards + 2) compute passes and two of the
  // (2·forwards + 2) collectives; the backward (with any recomputation) the rest.
  LayerPasses p;
  p.forward = f.forward_s + cal_.layer_overhead_s;
  p.backward = compute - f.forward_s + 2 * cal_.layer_overhead_s;
  const double comm = tp_comm + cp_comm + ep_comm;
  p.forward_comm = comm * 2 / (2 * forwards + 2);
  p.backward_comm = comm - p.forward_comm;
  return p;
}

void AnalyticCostModel::add_parameters(const TrainingConfig& t, const BlockShape& x,
                                       BlockCosts& c) const {
  const auto& m = model_;
  const double h = x.h;
  const double dense_mlp = m.mlp_parameters(m.ffn_hidden_size);
  double dense =
      m.attention_parameters() + (m.biases ? 2.0 : 1.0) * h + (1 - x.moe_fraction) * dense_mlp;
  double expert = 0;
  if (m.moe()) {
    const std::int64_t shared_ffn = m.shared_expert_ffn_hidden_size
                                        ? m.shared_expert_ffn_hidden_size
                                        : m.expert_ffn_hidden_size;
    dense +=
        x.moe_fraction * (static_cast<double>(m.shared_experts) * m.mlp_parameters(shared_ffn) +
                          static_cast<double>(m.num_experts) * h);
    expert = x.moe_fraction * static_cast<double>(m.num_experts) *
             m.mlp_parameters(m.expert_ffn_hidden_size);
  }
  c.layer_dense_params = dense / x.tp;
  c.layer_expert_params = expert / x.etp / t.ep;
  const double positions = m.learned_positions ? static_cast<double>(m.max_positions) * h : 0.0;
  c.embedding_params = (x.vocab * h + positions) / x.tp;
  // The LM head: its own matrix, or (tied) a copy of the embedding on the last stage.
  c.head_params = (m.tied_embeddings && t.pp == 1) ? 0.0 : x.vocab * h / x.tp;
}

namespace {

// A layer's activations under the configured recomputation (full: its input only; selective:
// what the stack's selective scheme keeps; none: all), what the layers a partial full
// recomputation leaves alone keep (everything), and one layer's set while it is recomputed.
void set_layer_activations(Recompute recompute, double full_layer, double selective,
                           double input_only, BlockCosts& c) {
  const bool full = recompute == Recompute::kFull;
  c.layer_activation_bytes = full                                 ? input_only
                             : recompute == Recompute::kSelective ? selective
                                                                  : full_layer;
  c.layer_plain_activation_bytes = full ? full_layer : c.layer_activation_bytes;
  c.recompute_working_bytes = full ? full_layer : 0.0;
}

}  // namespace

bool autocast_over_fp32_weights(const TrainingConfig& t) {
  return t.stack == Stack::kFsdp && (t.zero_stage < 3 || t.dp * t.cp == 1);
}

void AnalyticCostModel::add_eager_activations(const TrainingConfig& t, const BlockShape& x,
                                              BlockCosts& c) const {
  // Every tensor autograd keeps when each operation is its own eager PyTorch kernel (a model as
  // users write it: nn.RMSNorm or nn.LayerNorm, RoPE in element-wise ops, SDPA, nn.Linear, the
  // activation function, residual adds), per token of one layer, in bytes:
  //  - the residual stream, kept by each of the two norms as its input: fp32 under autocast over
  //    fp32 weights (the embedding's output is fp32 and each residual add promotes), else bf16;
  //  - each norm's output as the next linear keeps it, in bf16 (autocast's cast, or the norm's
  //    own output in bf16);
  //  - the QKV projection's output, alive through its views (SDPA keeps v);
  //  - RoPE's rotated queries and keys (new tensors, kept by SDPA in bf16), where RoPE applies;
  //  - the attention's output (kept by SDPA and, as the same storage, by the output
  //    projection) and its fp32 log-sum-exp per head; standard attention its scores instead;
  //  - the MLP: gated, the gate-and-up output, the activation's output and the product (8 bytes
  //    per ffn unit); else the up output and the activation's output (4);
  //  - dropout's masks (a byte per element) where the model drops out.
  // docs/cost-models.md ("Memory as the allocator sees it") checks this against the H100 runs.
  const auto& m = model_;
  const double tp = x.tp, h = x.h, tokens = x.tokens;
  const double r = autocast_over_fp32_weights(t) ? 4.0 : 2.0;
  const bool sp = t.sequence_parallel;
  const bool dropout = t.dropout && m.dropout;
  const bool rope = !m.learned_positions && !m.alibi;
  const double replicated = 2 * (r + 2) * h + (dropout ? 2 * h : 0.0);
  double split = 2 * (x.q_dim + 2 * x.kv_dim) + (rope ? 2 * (x.q_dim + x.kv_dim) : 0.0) +
                 (m.qk_norm ? 2 * (x.q_dim + x.kv_dim) : 0.0) + 2 * x.q_dim;
  const double ffn = static_cast<double>(m.ffn_hidden_size);
  split += (1 - x.moe_fraction) * (m.gated_mlp ? 8.0 : 4.0) * ffn;
  if (m.moe()) {  // the routed copies' expert MLPs on the busiest rank, the router's fp32 scores
    const double ffn_e = static_cast<double>(m.expert_ffn_hidden_size);
    split += x.moe_fraction *
             (x.top_k * x.load * (2 * h + (m.gated_mlp ? 8.0 : 4.0) * ffn_e) + 4 * x.experts);
  }
  const double heads = static_cast<double>(m.num_attention_heads);
  const double scores =
      x.flash ? 4.0 * heads * tokens / tp : (dropout ? 5.0 : 2.0) * heads * tokens * x.s / tp;
  const double full_layer = tokens * (replicated / (sp ? tp : 1.0) + split / tp) + scores;
  const double input_only = tokens * r * h / (sp ? tp : 1.0);
  // Selective on this stack is torchtitan's per-op checkpointing: it keeps the layer's input,
  // the outputs of every second GEMM (q, v, the gate or up projection, and down when gated: q,
  // v, up otherwise) and the attention's output and log-sum-exp; the rest is recomputed. MoE
  // layers' experts keep everything (grouped GEMMs are not in its list).
  const double kept_gemms =
      2 * (x.q_dim + x.kv_dim) + (1 - x.moe_fraction) * (m.gated_mlp ? 2 * ffn + 2 * h : 2 * ffn);
  const double selective =
      tokens * ((r * h) / (sp ? tp : 1.0) + (kept_gemms + 2 * x.q_dim) / tp) +
      (x.flash ? scores : 0.0) +
      (m.moe() ? tokens * x.moe_fraction * x.top_k * x.load *
                     (2 * h +
                      (m.gated_mlp ? 8.0 : 4.0) * static_cast<double>(m.expert_ffn_hidden_size)) /
                     tp
               : 0.0);
  set_layer_activations(t.recompute, full_layer, selective, input_only, c);
  // The loss at the start of the backward, its peak: eager, the log-softmax output kept by the
  // loss, the gradient the loss hands it and the gradient it computes (fp32 under autocast: 12
  // bytes per logit; a bf16 loss 6), over the model's own vocabulary; a fused kernel, the bf16
  // logits it keeps and overwrites with their gradient (2). And the final norm's input and
  // output as the LM head keeps them.
  const double vocab = static_cast<double>(m.vocab_size) / tp;
  const double per_logit = t.fused_loss ? 2.0 : t.fp32_loss ? 12.0 : 6.0;
  c.logits_bytes = tokens * (vocab * per_logit + (r + 2) * h / (sp ? tp : 1.0));
}

void AnalyticCostModel::add_activations(const TrainingConfig& t, const BlockShape& x,
                                        BlockCosts& c) const {
  if (t.stack == Stack::kFsdp && !t.fused_elementwise) {
    add_eager_activations(t, x, c);
    return;
  }
  const auto& m = model_;
  const double tp = x.tp, h = x.h, b = x.b, s_local = x.s_local;
  // Activations per layer per micro-batch (Korthikanti et al.), s → s/cp per device.
  const double sbh = s_local * b * h;
  // Standard attention keeps the softmax output, its dropout mask and the dropped-out scores
  // (5 bytes per score); FlashAttention only its fp32 log-sum-exp per row.
  // (2 bytes without dropout: the softmax output alone).
  const bool dropout = t.dropout && m.dropout;
  const double scores = x.flash
                            ? 4.0 * static_cast<double>(m.num_attention_heads) * b * s_local / tp
                            : (dropout ? 5.0 : 2.0) * static_cast<double>(m.num_attention_heads) *
                                  b * s_local * x.s / tp;
  // Korthikanti's 34·sbh counts the two residual dropout masks (sbh bytes each); without dropout
  // they are not kept: 32·sbh. `replicated` is the part tensor parallelism does not split.
  // FP8: the inputs of the QKV and first MLP GEMMs (in the replicated part) and of the second
  // MLP GEMM (f wide) are saved in FP8, a byte per element less.
  const double replicated = (dropout ? 10 : 8) - (t.fp8 ? 2 : 0);
  const double fp8_saved =
      t.fp8 ? (1 - x.moe_fraction) * static_cast<double>(m.ffn_hidden_size) / h : 0.0;
  // An MoE layer keeps, instead of the dense MLP's 16·sbh (two 4h-wide bf16 tensors), the
  // permuted expert inputs and, per routed copy, the expert MLP's intermediate tensors (gated:
  // gate, up and their product; else the input and output of the activation), on the busiest
  // rank `load` times the mean, and the router's fp32 probabilities.
  double moe_extra = 0;
  if (m.moe()) {
    const double ffn_e = static_cast<double>(m.expert_ffn_hidden_size);
    const double per_token =
        x.top_k * x.load * (2 * h + (m.gated_mlp ? 6.0 : 4.0) * ffn_e) + 4 * x.experts;
    moe_extra = x.moe_fraction * (s_local * b * per_token - 16 * sbh) / tp;
  }
  const double split = 24 - fp8_saved;
  const double full_layer = (t.sequence_parallel ? sbh * (replicated + split) / tp + scores
                                                 : sbh * (replicated + split / tp) + scores) +
                            moe_extra;
  const double selective =
      (t.sequence_parallel ? sbh * (replicated + split) / tp : sbh * (replicated + split / tp)) +
      moe_extra;
  const double input_only = t.sequence_parallel ? 2 * sbh / tp : 2 * sbh;
  set_layer_activations(t.recompute, full_layer, selective, input_only, c);
  // The bf16 logits and the log-softmax the loss keeps for its backward (fp32 or bf16).
  c.logits_bytes = x.tokens * x.vocab / tp * (2 + (t.fp32_loss ? 4 : 2));
}

BlockCosts AnalyticCostModel::block_costs(const TrainingConfig& t) const {
  const BlockShape x = block_shape(t);
  const LayerForward f = layer_forward(t, x);
  BlockCosts c;
  const LayerPasses configured = layer_passes(t, x, f, t.recompute, &c);
  const LayerPasses plain = t.recompute == Recompute::kFull
                                ? layer_passes(t, x, f, Recompute::kNone, nullptr)
                                : configured;
  c.layer_s = configured.total();
  c.layer_plain_s = plain.total();
  c.layer_forward_s = configured.forward;
  c.layer_forward_comm_s = configured.forward_comm;
  c.layer_backward_s = configured.backward;
  c.layer_backward_comm_s = configured.backward_comm;
  c.layer_plain_backward_s = plain.backward;
  c.layer_plain_backward_comm_s = plain.backward_comm;
  c.embedding_s = 3 * x.tokens * x.h * 2 / x.hbm;
  // Soft-capped logits: read and written once more forward and backward (bf16).
  const double logit_bytes = cal_.logit_bytes_per_element + (model_.logit_softcap > 0 ? 8.0 : 0.0);
  c.head_s = 3 * gemm_s(x, x.tokens, x.vocab / x.tp, x.h) +
             logit_bytes * x.tokens * x.vocab / x.tp / x.hbm;
  if (t.pp > 1) {  // pipeline neighbours sit tp × cp apart
    const bool crosses = t.tp * t.cp * t.pp > x.node && cluster_.tiers.size() > 1;
    // With sequence parallelism the hidden states between stages are split over the
    // tensor-parallel ranks, each sending its part (Megatron-Core's pipeline tensor shape).
    c.p2p_bytes = t.sequence_parallel ? x.act_bytes / x.tp : x.act_bytes;
    c.p2p_bandwidth_bytes_per_s = tier_bandwidth(crosses ? 1 : 0, cal_.p2p_efficiency);
    c.p2p_send_s = c.p2p_bytes / c.p2p_bandwidth_bytes_per_s + cal_.p2p_overhead_s;
    c.p2p_s = 2 * c.p2p_send_s;
  }
  add_parameters(t, x, c);
  add_activations(t, x, c);
  if (model_.mtp_layers > 0) {
    // Multi-token prediction (DeepSeek-V3): after the last layer, each module runs one more
    // layer (on the hidden state and the next token's embedding, joined by a 2h × h projection)
    // and the LM head again, forward and backward; the last stage holds it.
    const double mtp = static_cast<double>(model_.mtp_layers);
    c.head_s += mtp * (c.layer_plain_s + c.head_s + 3 * gemm_s(x, x.tokens, x.h, 2 * x.h));
    c.head_params += mtp * (c.layer_dense_params + c.layer_expert_params + 2 * x.h * x.h / x.tp);
    c.logits_bytes *= 1 + mtp;
  }
  return c;
}

AnalyticCostModel::CollectiveGroup AnalyticCostModel::collective_group(int members,
                                                                       int stride) const {
  const int node = cluster_.machine_sizes.empty() ? 1 : cluster_.machine_sizes[0];
  const auto& eff = cal_.collective_efficiency;
  if (static_cast<std::int64_t>(members) * stride <= node || cluster_.tiers.size() < 2)
    return {cluster_.tiers[0].bandwidth_bytes_per_s * eff.at(0), 1};
  const int per_node = std::clamp(node / std::max(1, stride), 1, members);
  return {cluster_.tiers[1].bandwidth_bytes_per_s *
              eff.at(std::min<std::size_t>(1, eff.size() - 1)) * per_node,
          (members + per_node - 1) / per_node};
}

double AnalyticCostModel::stage_sends_s(const TrainingConfig& t, const BlockCosts& c,
                                        double compute_s) const {
  const double blocking = stage_sends(t) * c.p2p_send_s;
  if (!t.overlap_p2p_comm || t.vpp < 2 || blocking <= 0) return blocking;
  // Posted ahead and waited on just before use: each send hides behind the compute of one
  // chunk's pass (a forward or a backward of one micro-batch); the wire time it hides slows
  // that compute a little.
  const double window = compute_s / stage_sends(t);
  const double wire = c.p2p_bytes / c.p2p_bandwidth_bytes_per_s;
  return stage_sends(t) * (std::max(0.0, c.p2p_send_s - window) +
                           cal_.comm_overlap_slowdown * std::min(wire, window));
}

double AnalyticCostModel::stage_work_s(const TrainingConfig& t, const BlockCosts& c, bool first,
                                       bool last, int layers) const {
  const double n = layers;
  const double recomputed =
      t.recompute == Recompute::kFull && t.recompute_layers > 0
          ? std::min<double>(n, static_cast<double>(t.recompute_layers) * t.vpp)
          : (t.recompute == Recompute::kFull ? n : 0.0);
  const double compute = recomputed * c.layer_s + (n - recomputed) * c.layer_plain_s +
                         (first ? c.embedding_s : 0.0) + (last ? c.head_s : 0.0);
  return compute + stage_sends_s(t, c, compute);
}

AnalyticResult AnalyticCostModel::evaluate(const TrainingConfig& t) const {
  check(t);
  const auto& m = model_;
  const BlockCosts c = block_costs(t);
  AnalyticResult r;
  r.stage_layers = t.stage_layers.empty() ? even_stage_split(static_cast<int>(m.num_layers), t.pp)
                                          : t.stage_layers;
  const double microbatches = static_cast<double>(t.microbatches());
  double work_max = 0, work_sum = 0, sync_max = 0, optimizer_max = 0, peak = -1;
  int bottleneck = 0;
  for (int i = 0; i < t.pp; ++i) {
    const int n = r.stage_layers[static_cast<std::size_t>(i)];
    const bool first = i == 0, last = i == t.pp - 1;
    StageFigures st;
    st.layers = n;
    st.time_per_microbatch_s = stage_work_s(t, c, first, last, n);
    st.memory = stage_memory(t, c, i, n);
    if (st.time_per_microbatch_s > work_max) {
      work_max = st.time_per_microbatch_s;
      bottleneck = i;
    }
    work_sum += st.time_per_microbatch_s;
    const auto [dense, expert] = stage_parameters(c, t, i, n);
    // Gradient reduction may hide behind the last micro-batch's backward (two thirds of it).
    const double sync =
        gradient_sync_s(t, dense, expert, st.time_per_microbatch_s * 2 / 3) +
        (t.zero_stage == 3 ? microbatches * zero3_microbatch_s(t, c, n, st.time_per_microbatch_s)
                           : 0.0);
    sync_max = std::max(sync_max, sync);
    optimizer_max = std::max(optimizer_max, optimizer_step_s(t, dense, expert));
    if (st.memory.peak_bytes > peak) {
      peak = st.memory.peak_bytes;
      r.memory = st.memory;
    }
    r.stages.push_back(st);
  }
  // 1F1B: the bottleneck stage paces every micro-batch; the others add the fill and drain,
  // shortened by the interleaving factor.
  r.pipeline_s = microbatches * work_max + (work_sum - work_max) / t.vpp;
  r.bubble_s = r.pipeline_s - microbatches * work_max;
  const int nb = r.stage_layers[static_cast<std::size_t>(bottleneck)];
  const double sends = stage_sends_s(t, c, work_max - stage_sends(t) * c.p2p_send_s);
  r.compute_per_microbatch_s = work_max - sends - nb * (c.tp_comm_s + c.cp_comm_s + c.ep_comm_s);
  r.tp_comm_per_microbatch_s = nb * c.tp_comm_s;
  r.pp_comm_per_microbatch_s = sends;
  r.dp_allreduce_s = sync_max;
  r.optimizer_s = optimizer_max;
  r.iteration_time_s = r.pipeline_s + r.dp_allreduce_s + r.optimizer_s + cal_.iteration_overhead_s;

  const double s = static_cast<double>(t.seq_len), h = static_cast<double>(m.hidden_size);
  const double q_dim = block_shape(t).product_dim;
  const double vocab = std::ceil(static_cast<double>(m.vocab_size) / (128.0 * t.tp)) * 128.0 * t.tp;
  const double total_tokens = static_cast<double>(t.global_batch) * s;
  r.tokens_per_s = total_tokens / r.iteration_time_s;
  // Model FLOPs per token: 6 × active parameters (without embeddings) + attention + LM head.
  const double model_flops =
      total_tokens * (6 * (m.active_parameters() - m.embedding_parameters()) +
                      12.0 * static_cast<double>(m.num_layers) * q_dim * s + 6 * h * vocab);
  const double peak_flops = cluster_.device_types[0].peak_flops_per_s;
  r.tflops_per_device = model_flops / r.iteration_time_s / t.devices() / 1e12;
  r.mfu = r.tflops_per_device * 1e12 / peak_flops;
  r.fits = r.memory.peak_bytes <= device_memory_bytes();
  return r;
}

double AnalyticCostModel::time_lower_bound(const TrainingConfig& t) const {
  const BlockCosts c = block_costs(t);
  const double L = static_cast<double>(model_.num_layers);
  const double layer = t.recompute == Recompute::kFull && t.recompute_layers == 0
                           ? c.layer_s
                           : std::min(c.layer_s, c.layer_plain_s);
  const double p = t.pp;
  // Overlapped sends may cost nothing: the bound counts none.
  const double sends = t.overlap_p2p_comm && t.vpp > 1 ? 0.0 : stage_sends(t) * c.p2p_send_s;
  const double work_sum = L * layer + c.embedding_s + c.head_s + p * sends;
  const double work_max = std::max(work_sum / p, layer + sends);
  const double pipeline =
      static_cast<double>(t.microbatches()) * work_max + (work_sum - work_max) / t.vpp;
  // Synchronisation and optimizer grow with a stage's parameters: the average stage is a bound.
  const double dense = (L * c.layer_dense_params + c.embedding_params + c.head_params) / p;
  const double expert = L * c.layer_expert_params / p;
  // With overlap, the most a stage can hide is all of it (an unbounded backward window).
  // (ZeRO 3's per-layer collectives, which the prefetch may hide, count nothing here.)
  const double sync = gradient_sync_s(t, dense, expert, std::numeric_limits<double>::infinity());
  return pipeline + sync + optimizer_step_s(t, dense, expert) + cal_.iteration_overhead_s;
}

}  // namespace paraplan
