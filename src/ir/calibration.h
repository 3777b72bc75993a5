// The calibration of the analytic cost model for one device type: efficiencies and latencies
// that are properties of the hardware and its software stack, not of a configuration.
#pragma once

#include <string>
#include <vector>

namespace paraplan {

/// Physically meaningful efficiencies of one device type and its links, fitted once against
/// measurements (never per configuration). Read from and written to JSON or YAML by io/calibration_file.
struct Calibration {
  std::string device = "A100";
  double gemm_efficiency = 0.8752;              ///< of peak FLOP/s, for large matrix products
  /// GEMM efficiency by size: gemm_efficiency · F / (F + this), F the product's FLOPs.
  double gemm_half_efficiency_flops = 3.677e8;
  double attention_efficiency = 0.5849;         ///< of peak, for the s×s score products
  double memory_bandwidth_bytes_per_s = 1.8e12;  ///< achieved by memory-bound kernels
  double score_bytes_per_element = 14.43;      ///< softmax/mask/dropout traffic per score, forward
  double hidden_bytes_per_element = 0.0005608;    ///< element-wise traffic per hidden activation
  double layer_overhead_s = 0.00072;          ///< framework time per layer per pass
  /// Achieved fraction of each tier's nominal bandwidth for collectives (innermost first); with
  /// the latency below this gives the efficiency by message size: bytes / (bytes/bw + latency).
  std::vector<double> collective_efficiency = {0.8498, 0.9123};
  double ring_step_latency_s = 1.35e-05;        ///< per ring step (and per all-to-all peer)
  /// Achieved fraction of each tier's bandwidth for pipeline sends, and a fixed cost per send.
  std::vector<double> p2p_efficiency = {0.95, 0.7805};
  double p2p_overhead_s = 0.0006386;
  double gradient_bytes_per_parameter = 4;    ///< fp32 gradient accumulation and reduction
  double optimizer_bytes_per_parameter = 16;  ///< Adam step traffic (read + write)
  double iteration_overhead_s = 3.289e-05;
  /// Compute slows by this fraction of the communication time it overlaps with.
  double overlap_slowdown = 0.1;
  /// Device memory the runtime holds outside the framework's tensors: CUDA context, cuBLAS
  /// workspaces, NCCL communicator buffers (about 0.5 GiB of context and 0.5-0.7 GiB per NCCL
  /// communicator on A100; Megatron-LM opens at least three per rank).
  double runtime_reserved_bytes = 2.5 * 1073741824.0;
  /// The caching allocator's fragmentation, as a fraction of the memory that is allocated and
  /// freed within an iteration (activations, logits, recomputation working space). GMLake
  /// (ASPLOS 2024) measured 15 % on average for LLM training with PyTorch on A100-80GB.
  double allocator_fragmentation = 0.15;
};

}  // namespace paraplan
