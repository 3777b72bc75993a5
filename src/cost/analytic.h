// The analytical cost model of transformer training: per-GEMM rooflines, memory-bound attention
// terms, collectives priced on the link tier they cross, the 1F1B pipeline, the data-parallel
// gradient all-reduce, the optimizer step; memory per device after Korthikanti et al. (2022).
// Every efficiency comes from a Calibration (docs/cost-models.md gives each formula).
#pragma once

#include <string>
#include <vector>

#include "ir/cluster.h"
#include "ir/training.h"
#include "ir/transformer.h"

namespace paraplan {

/// Physically meaningful efficiencies of one device type and its links, fitted once against
/// measurements (never per configuration).
struct Calibration {
  std::string device = "A100";
  double gemm_efficiency = 0.85;              ///< of peak FLOP/s, for large matrix products
  double attention_efficiency = 0.82;         ///< of peak, for the s×s score products
  double memory_bandwidth_bytes_per_s = 1.555e12;  ///< achieved by memory-bound kernels
  double score_bytes_per_element = 10.9;      ///< softmax/mask/dropout traffic per score, forward
  double hidden_bytes_per_element = 0.001;    ///< element-wise traffic per hidden activation
  double layer_overhead_s = 0.00072;          ///< framework time per layer per pass
  /// Achieved fraction of each tier's nominal bandwidth for ring collectives (innermost first).
  std::vector<double> collective_efficiency = {0.879, 0.697};
  double ring_step_latency_s = 1.3e-5;
  /// Achieved fraction of each tier's bandwidth for pipeline sends, and a fixed cost per send.
  std::vector<double> p2p_efficiency = {0.432, 0.865};
  double p2p_overhead_s = 0.00072;
  double gradient_bytes_per_parameter = 4;    ///< fp32 gradient accumulation and all-reduce
  double optimizer_bytes_per_parameter = 36;  ///< Adam step traffic (read + write)
  double iteration_overhead_s = 3.4e-5;
};

/// Shipped calibrations: "A100" (fitted on shared/data/vtrain), "H100" and "H200" (the A100
/// efficiencies with their own memory bandwidth until measurements exist).
Calibration default_calibration(const std::string& device);

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;  ///< logits and communication buffers
  double peak_bytes = 0;
};

struct AnalyticResult {
  double iteration_time_s = 0;
  // Breakdown (seconds of the iteration).
  double pipeline_s = 0;        ///< forward/backward of all micro-batches incl. bubble
  double compute_per_microbatch_s = 0;   ///< bottleneck stage, one micro-batch
  double tp_comm_per_microbatch_s = 0;
  double pp_comm_per_microbatch_s = 0;
  double bubble_s = 0;
  double dp_allreduce_s = 0;
  double optimizer_s = 0;
  double tokens_per_s = 0;
  double tflops_per_device = 0;  ///< model FLOPs (no recomputation) per device per second / 1e12
  double mfu = 0;
  MemoryBreakdown memory;
  bool fits = true;
};

class AnalyticCostModel {
 public:
  AnalyticCostModel(TransformerConfig model, Cluster cluster, Calibration calibration);

  /// Error(kUsage) naming the knob and the rule when the configuration is not valid for the
  /// model and cluster (heads not divisible by tp, batch not divisible, devices, ...).
  AnalyticResult evaluate(const TrainingConfig& config) const;
  /// Throws like evaluate; no pricing.
  void check(const TrainingConfig& config) const;

  const TransformerConfig& model() const { return model_; }
  const Cluster& cluster() const { return cluster_; }

 private:
  TransformerConfig model_;
  Cluster cluster_;
  Calibration cal_;
};

}  // namespace paraplan
