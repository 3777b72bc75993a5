// A measured training run: what was trained, how, on what, and the iteration time it took. The
// readers of published measurement sets (io/vtrain_reader, io/mpt_reader) fill it; validate/
// prices it with the analytic model. Fields beyond the vTrain columns default to vTrain's setting
// (2023 Megatron-DeepSpeed on A100 40 GB: standard attention, full recomputation, no ZeRO).
#pragma once

#include <cstdint>
#include <string>

#include "ir/training.h"

namespace paraplan::io {

struct MeasuredRun {
  int line = 0;                   ///< 1-based line in the file
  std::string set;                ///< the measurement set: "multi", "single" (vTrain), "mpt"
  std::string model;              ///< the set's name for the model ("7b"); may be empty
  double parameters_billion = 0;  ///< as published; 0 when the set gives none
  int gpus = 0;
  std::int64_t global_batch = 0, micro_batch = 0;  ///< sequences
  std::int64_t hidden = 0, heads = 0, layers = 0, seq_len = 0;
  std::int64_t vocab = 50257;
  bool biases = true;
  bool dropout = true;  ///< attention and residual dropout (their masks are kept for the backward)
  int tp = 0, dp = 0, pp = 0;
  int zero_stage = 0;
  Attention attention = Attention::kStandard;
  Recompute recompute = Recompute::kFull;
  bool bf16_gradient_reduction = false;  ///< gradients reduced in bf16 (else fp32)
  bool fused_elementwise = true;         ///< Megatron's fused kernels (else eager PyTorch)
  bool fp32_loss = true;                 ///< loss on fp32 logits (else pure bf16)
  bool fused_loss = false;               ///< TrainingConfig::fused_loss
  /// The engine: vTrain's Megatron-DeepSpeed (Megatron's fused kernels, nothing overlapped).
  Stack stack = Stack::kDeepSpeed;
  bool fp8 = false;                     ///< FP8 matrix products (Transformer Engine)
  std::string device = "A100";          ///< device type (its calibration)
  std::string cluster = "vtrain-a100";  ///< cluster preset (zoo/cluster_presets)
  double device_memory_bytes = 40.0 * (1ull << 30);
  double iteration_time_s = 0;
};

}  // namespace paraplan::io
