// The calibration of the analytic cost model for one device type: efficiencies and latencies
// that are properties of the hardware and its software stack, not of a configuration.
#pragma once

#include <string>
#include <vector>

namespace paraplan {

/// Physically meaningful efficiencies of one device type and its links, fitted once against
/// measurements (never per configuration). Read from and written to JSON or YAML by
/// io/calibration_file.
struct Calibration {
  std::string device = "A100";
  double gemm_efficiency = 0.8158;  ///< of peak FLOP/s, for large matrix products
  /// GEMM efficiency by size: gemm_efficiency · F / (F + this), F the product's FLOPs.
  double gemm_half_efficiency_flops = 1.297e9;
  double attention_efficiency = 0.80;  ///< of peak, for the s×s score products
  /// Of peak, for FlashAttention's forward products (the causal half it computes): tiled, with the
  /// softmax rescaling on the vector units between the two products.
  double flash_attention_efficiency = 0.4565;
  /// The same for its backward (2.5 times the forward's products, with more traffic per tile).
  double flash_backward_efficiency = 0.2732;
  /// The same for the fused attention kernel Megatron-Core calls through Transformer Engine
  /// (cuDNN's): FlashAttention-2-class on Ampere (so the A100 values are the flash ones),
  /// FlashAttention-3-class on Hopper.
  double fused_attention_efficiency = 0.4565;
  double fused_attention_backward_efficiency = 0.2732;
  double memory_bandwidth_bytes_per_s = 1.656e12;  ///< achieved by memory-bound kernels
  double score_bytes_per_element = 11.49;  ///< softmax/mask/dropout traffic per score, forward
  double hidden_bytes_per_element = 0;     ///< element-wise traffic per hidden activation
  /// The same when every element-wise operation is its own eager PyTorch kernel (layer norm,
  /// GELU, residual adds, casts each read and write the activation).
  double eager_hidden_bytes_per_element = 88.68;
  double layer_overhead_s = 0.0006889;  ///< framework time per layer per pass
  /// Memory traffic per logit of the LM head's loss, forward and backward (fp32 log-softmax,
  /// its gradient, the casts).
  double logit_bytes_per_element = 20.98;
  /// Achieved fraction of each tier's nominal bandwidth for collectives (innermost first); with
  /// the latency below this gives the efficiency by message size: bytes / (bytes/bw + latency).
  std::vector<double> collective_efficiency = {0.9493, 0.9156};
  double ring_step_latency_s =
      1.408e-05;                          ///< per ring step inside a node (and per all-to-all peer)
  double network_step_latency_s = 3e-06;  ///< per ring step that crosses nodes (and per tree level)
  /// Achieved fraction of each tier's bandwidth for pipeline sends, and a fixed cost per send.
  std::vector<double> p2p_efficiency = {0.95, 0.8647};
  double p2p_overhead_s = 0.0007398;
  double gradient_bytes_per_parameter = 4;    ///< fp32 gradient accumulation and reduction
  double optimizer_bytes_per_parameter = 16;  ///< Adam step traffic (read + write)
  double iteration_overhead_s = 0;
  /// Compute slows by this fraction of the communication time it overlaps with.
  double overlap_slowdown = 0.6477;
  /// The same for what Megatron-Core overlaps (tensor-parallel chunks through userbuffers,
  /// pipeline sends, the distributed optimizer's gradient reduce-scatter and parameter
  /// all-gather): the SMs and HBM bandwidth its communication kernels take from the GEMMs.
  double comm_overlap_slowdown = 0.2;
  /// Device memory the runtime holds outside the framework's tensors, beside NCCL: the CUDA
  /// context with its loaded kernels and the cuBLAS workspaces (about 0.5-0.75 GiB on A100).
  double runtime_reserved_bytes = 0.75 * 1073741824.0;
  /// NCCL's buffers per communicator a rank belongs to (channels × peers × protocol buffers:
  /// about 0.5 GiB on A100 with its default 4 MiB buffers); the tensor-, context-, pipeline-
  /// (with Megatron's embedding group), data- and expert-parallel groups each open one.
  double nccl_communicator_bytes = 0.5 * 1073741824.0;
  /// The caching allocator's fragmentation, as a fraction of the memory that is allocated and
  /// freed within an iteration (activations, logits, recomputation working space). GMLake
  /// (ASPLOS 2024) measured 15 % on average for LLM training with PyTorch on A100-80GB.
  double allocator_fragmentation = 0.05;
  /// Dropless MoE with expert parallelism: tokens on the busiest expert-parallel rank over the
  /// mean (its expert GEMMs and the all-to-all it receives set the pace). A property of routing
  /// trained with a load-balancing loss, not of the device; 1 = perfectly balanced routing.
  double moe_load_imbalance = 1.1;
};

}  // namespace paraplan
